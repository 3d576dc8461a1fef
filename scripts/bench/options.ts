/**
 * Command line and run sizes. `--quick` keeps every scenario but shortens it (under a minute on
 * a quiet 2-core machine, QUICK below); the full run takes more samples and draws the curves out to their
 * full range (10,000 sockets, 100,000 registrations). `--smoke` is the tiny size the report test
 * uses (every code path, no meaningful figure). `--only a,b` runs some scenarios; `--profile`
 * starts the service with `node --cpu-prof`; `--out=<dir>` writes latest.json and latest.html
 * there instead of bench/results/. `--rounds=N` sets the baseline/service alternations of the
 * ingestion and endpoint scenarios: more rounds give a steadier median on a busy machine.
 * `--connections=N` sets the closed-loop blasts' keep-alive connections (default 32), for both
 * the baseline and the service: how the ratios move with the number of clients in flight.
 */
// `cost` runs last: its replies leave keys that expire within minutes, which would move the memory curves
export const SCENARIOS = ['ingestion', 'login', 'pipeline', 'endpoints', 'memory', 'cost'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
export type Mode = 'full' | 'quick' | 'smoke';

export interface Sizes {
  /** baseline/service alternations, and seconds of load in each */
  ingestionRounds: number;
  ingestionSeconds: number;
  warmupSeconds: number;
  /** autocannon connections for every closed-loop blast */
  connections: number;
  /** offered webhook rates (logins/s) of the latency curve; it stops at the first saturated one */
  loginRates: number[];
  /** seconds each rate is held, and how much of the start is warm-up (left out of p50/p99) */
  loginSeconds: number;
  loginWarmupSeconds: number;
  /** beside the simplest pipeline: steps of each side at each rate (alternating), their seconds and warm-up */
  pipelineRounds: number;
  pipelineSeconds: number;
  pipelineWarmupSeconds: number;
  /** the sustained-rate search: first rate, highest rate tried, bisections once a step failed, each step's seconds and warm-up */
  sustainStart: number;
  sustainMax: number;
  sustainBisections: number;
  sustainSeconds: number;
  sustainWarmupSeconds: number;
  /** worker processes for the throughput curve, and the backlog each count drains */
  workerCounts: number[];
  workerLogins: number;
  /** drains of that backlog at each count; the point is their median (one drain of 3 s is at the mercy of a VM's neighbours) */
  workerRepeats: number;
  /** logins of each run of the cost-per-login table (confirmation off, replies on, confirmation on) */
  costLogins: number;
  /** logins each of those runs makes first, uncounted: a new worker's compiler warm-up */
  costWarmupLogins: number;
  /** endpoints: baseline/service alternations and seconds of each */
  endpointRounds: number;
  endpointSeconds: number;
  /**
   * check-login (verified): requests of each round, each collecting one real login; one more
   * round's worth is collected first as warm-up (the verified branch's code and the baseline's
   * connections warm, as the timed endpoints' warm-up seconds do)
   */
  verifiedPerRound: number;
  /** sessions the profile and refresh-token runs poll in turn (taken from those logins) */
  sessionPool: number;
  /** active registrations at each point of the Redis memory curve (cumulative) */
  registrationPoints: number[];
  /** logins for the bytes-per-session figure */
  sessionLogins: number;
  /** idle sockets on web-1 at each point of the RSS curve (cumulative) */
  socketPoints: number[];
  /** how long the last point's sockets are then left idle, RSS read each second (a ping round is 25 s) */
  socketIdleSeconds: number;
  drainTimeoutMs: number;
}

export interface BenchOptions {
  mode: Mode;
  profile: boolean;
  scenarios: ScenarioName[];
  sizes: Sizes;
  /** directory for latest.json and latest.html; undefined: bench/results */
  outDir: string | undefined;
}

// Under a minute on the 2-core machine: fewer and smaller points than the full run, each still
// long enough to read (a blast of 1 s is thousands of requests). Until autocannon sampled every
// 100 ms (load.ts) every blast lasted at least a second whatever it asked: the rounds' 0.5 and
// 0.8 s were 1 s, which they now say, and each 0.3 s warm-up was 1 s too.
const QUICK: Sizes = {
  ingestionRounds: 2,
  ingestionSeconds: 1,
  warmupSeconds: 0.3,
  connections: 32,
  loginRates: [250, 500, 1000],
  // 3 s a step, the first out as warm-up: 1,000 measured logins at 500/s, so p99 is the tenth
  // slowest, not the fourth (1 s steps read p99 13–16 ms for one build within an hour)
  loginSeconds: 3,
  loginWarmupSeconds: 1,
  // 250 measured logins a round at 100/s, 500 at 200/s: p99 is the third / fifth slowest
  pipelineRounds: 4,
  pipelineSeconds: 3,
  pipelineWarmupSeconds: 0.5,
  // 100 → 200 → … until one fails, then 3 bisections: within an eighth of the last doubling
  sustainStart: 100,
  sustainMax: 6400,
  sustainBisections: 3,
  sustainSeconds: 3,
  sustainWarmupSeconds: 1,
  // 4 workers on two cores only share them: the full run draws that point
  workerCounts: [1, 2],
  workerLogins: 500,
  workerRepeats: 1,
  costLogins: 1000,
  costWarmupLogins: 300,
  endpointRounds: 1,
  endpointSeconds: 1,
  verifiedPerRound: 400,
  sessionPool: 400,
  registrationPoints: [500, 1000, 1500],
  sessionLogins: 150,
  socketPoints: [0, 500, 1000],
  socketIdleSeconds: 1,
  drainTimeoutMs: 30_000,
};

const FULL: Sizes = {
  ingestionRounds: 3,
  ingestionSeconds: 5,
  warmupSeconds: 2,
  connections: 32,
  loginRates: [250, 500, 1000, 1500, 2000, 3000, 4000, 6000],
  loginSeconds: 5,
  loginWarmupSeconds: 2,
  pipelineRounds: 5,
  pipelineSeconds: 5,
  pipelineWarmupSeconds: 1,
  sustainStart: 100,
  sustainMax: 12_800,
  sustainBisections: 4,
  sustainSeconds: 5,
  sustainWarmupSeconds: 2,
  workerCounts: [1, 2, 4],
  workerLogins: 10_000,
  workerRepeats: 3,
  costLogins: 5000,
  costWarmupLogins: 1000,
  endpointRounds: 3,
  endpointSeconds: 3,
  verifiedPerRound: 10_000,
  sessionPool: 6000,
  registrationPoints: [1000, 10_000, 25_000, 50_000, 100_000],
  sessionLogins: 5000,
  socketPoints: [0, 1000, 2500, 5000, 7500, 10_000],
  socketIdleSeconds: 30,
  drainTimeoutMs: 120_000,
};

/** Every code path on the smallest sizes: what the report test runs (figures meaningless). */
const SMOKE: Sizes = {
  ingestionRounds: 1,
  ingestionSeconds: 0.3,
  warmupSeconds: 0.2,
  connections: 4,
  loginRates: [50, 100],
  loginSeconds: 0.6,
  loginWarmupSeconds: 0.2,
  pipelineRounds: 1,
  pipelineSeconds: 0.6,
  pipelineWarmupSeconds: 0.2,
  // 100 then 200: the search's both branches (a step sustained, the highest tried) in two steps a side
  sustainStart: 100,
  sustainMax: 200,
  sustainBisections: 0,
  sustainSeconds: 0.6,
  sustainWarmupSeconds: 0.2,
  workerCounts: [1, 2],
  workerLogins: 60,
  workerRepeats: 2,
  costLogins: 20,
  costWarmupLogins: 5,
  endpointRounds: 1,
  // 1 s, not 0.3: two suites at once on two cores once left refresh-token a blast with no answer
  endpointSeconds: 1,
  verifiedPerRound: 40,
  sessionPool: 40,
  registrationPoints: [50, 100],
  sessionLogins: 20,
  socketPoints: [0, 20, 40],
  socketIdleSeconds: 1,
  drainTimeoutMs: 20_000,
};

export function parseArgs(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  const smoke = argv.includes('--smoke');
  if (quick && smoke) throw new Error('--quick and --smoke exclude each other');
  const profile = argv.includes('--profile');
  const onlyArg = argv.find((a) => a.startsWith('--only='));
  const outArg = argv.find((a) => a.startsWith('--out='));
  const roundsArg = argv.find((a) => a.startsWith('--rounds='));
  const connectionsArg = argv.find((a) => a.startsWith('--connections='));
  let scenarios: ScenarioName[] = [...SCENARIOS];
  if (onlyArg) {
    const wanted = onlyArg.slice('--only='.length).split(',');
    const unknown = wanted.filter((w) => !(SCENARIOS as readonly string[]).includes(w));
    if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
    scenarios = SCENARIOS.filter((s) => wanted.includes(s));
  }
  const known = new Set(['--quick', '--smoke', '--profile']);
  const valued = ['--only=', '--out=', '--rounds=', '--connections='];
  const stray = argv.filter((a) => !known.has(a) && !valued.some((v) => a.startsWith(v)));
  if (stray.length > 0)
    throw new Error(`unknown argument ${stray.join(' ')} (use --quick, --profile, --only=${SCENARIOS.join(',')}, --out=<dir>, --rounds=N, --connections=N)`);
  const mode: Mode = smoke ? 'smoke' : quick ? 'quick' : 'full';
  let sizes = mode === 'smoke' ? SMOKE : mode === 'quick' ? QUICK : FULL;
  if (roundsArg) {
    const rounds = Number(roundsArg.slice('--rounds='.length));
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds wants a whole number ≥ 1, got ${roundsArg}`);
    sizes = { ...sizes, ingestionRounds: rounds, endpointRounds: rounds };
  }
  if (connectionsArg) {
    const connections = Number(connectionsArg.slice('--connections='.length));
    if (!Number.isInteger(connections) || connections < 1 || connections > 1024)
      throw new Error(`--connections wants a whole number from 1 to 1024, got ${connectionsArg}`);
    sizes = { ...sizes, connections };
  }
  return { mode, profile, scenarios, sizes, outDir: outArg ? outArg.slice('--out='.length) : undefined };
}
