/**
 * Command line and run sizes. `--quick` keeps every scenario but shortens it (under a minute);
 * the full run takes more samples (under five). `--only a,b` runs some scenarios;
 * `--profile` starts the service with `node --cpu-prof` (profiles in bench/profiles/).
 */
export const SCENARIOS = ['ingestion', 'login', 'endpoints', 'memory'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Sizes {
  /** baseline/service alternations, and seconds of load in each */
  ingestionRounds: number;
  ingestionSeconds: number;
  warmupSeconds: number;
  /** autocannon connections for every closed-loop blast */
  connections: number;
  /** open-loop webhook rate for the end-to-end latency, and for how long */
  loginRate: number;
  loginSeconds: number;
  /** logins queued for the one-worker throughput run */
  workerLogins: number;
  endpointSeconds: number;
  registrations: number;
  idleSockets: number;
  drainTimeoutMs: number;
}

export interface BenchOptions {
  quick: boolean;
  profile: boolean;
  scenarios: ScenarioName[];
  sizes: Sizes;
}

const QUICK: Sizes = {
  ingestionRounds: 2,
  ingestionSeconds: 2,
  warmupSeconds: 1,
  connections: 32,
  loginRate: 500,
  loginSeconds: 3,
  workerLogins: 2000,
  endpointSeconds: 2,
  registrations: 5000,
  idleSockets: 2000,
  drainTimeoutMs: 30_000,
};

const FULL: Sizes = {
  ingestionRounds: 3,
  ingestionSeconds: 5,
  warmupSeconds: 3,
  connections: 32,
  loginRate: 500,
  loginSeconds: 10,
  workerLogins: 10_000,
  endpointSeconds: 5,
  registrations: 10_000,
  idleSockets: 2000,
  drainTimeoutMs: 90_000,
};

export function parseArgs(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const profile = argv.includes('--profile');
  const onlyArg = argv.find((a) => a.startsWith('--only='));
  let scenarios: ScenarioName[] = [...SCENARIOS];
  if (onlyArg) {
    const wanted = onlyArg.slice('--only='.length).split(',');
    const unknown = wanted.filter((w) => !(SCENARIOS as readonly string[]).includes(w));
    if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
    scenarios = SCENARIOS.filter((s) => wanted.includes(s));
  }
  const known = new Set(['--quick', '--profile']);
  const stray = argv.filter((a) => !known.has(a) && !a.startsWith('--only='));
  if (stray.length > 0) throw new Error(`unknown argument ${stray.join(' ')} (use --quick, --profile, --only=${SCENARIOS.join(',')})`);
  return { quick, profile, scenarios, sizes: quick ? QUICK : FULL };
}
