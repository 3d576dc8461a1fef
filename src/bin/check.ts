import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connect, waitReady } from '../redis/connection.js';
import { keys } from '../redis/keys.js';
import { redisWhere } from './banner.js';
import { configWarnings, redisWarnings } from './setup-checks.js';

const USAGE = `usage: node dist/src/bin/check.js <config|web|worker>

One-shot checks of the environment the service reads (REDIS_URL, KEY_PREFIX, ...):
  config   the environment loads: prints every problem at once, or "ok"; then warns about
           set-ups that load but cannot work (the log provider with LOGIN_CONFIRMATION, a
           Redis that may evict keys, another live process with this INSTANCE_NAME)
  web      this container's web node answers GET /health with 200
  worker   this container's worker wrote its metrics snapshot lately

Exit 0: yes (warnings do not fail); 1: no, with the reasons on stderr; 2: wrong usage.
  --help   this text
`;

/**
 * What a container platform asks of a process from outside, each a one-shot command. `config`
 * runs once before any node starts (Compose), so a missing secret is one clear report instead
 * of every node crash-looping; `web` and `worker` are the containers' health checks (the worker's
 * snapshot is written on a timer by a live event loop through a working Redis link).
 */
function usage(message: string): never {
  process.stderr.write(`check: ${message}\n${USAGE}`);
  process.exit(2);
}

let parsed: ReturnType<typeof parseArgs<{ options: { help: { type: 'boolean' } }; allowPositionals: true }>>;
try {
  parsed = parseArgs({ options: { help: { type: 'boolean' } }, allowPositionals: true });
} catch (err) {
  usage(err instanceof Error ? err.message : String(err));
}
if (parsed.values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const [mode, ...extra] = parsed.positionals;
if (mode === undefined) usage('name a check');
if (!['config', 'web', 'worker'].includes(mode)) usage(`unknown check "${mode}"`);
if (extra.length > 0) usage(`unexpected argument "${extra[0]}"`);

function fail(message: string): never {
  process.stderr.write(`pin-auth check ${mode}: ${message}\n`);
  process.exit(1);
}

function where(c: Config): string {
  return `redis ${redisWhere(c)}, KEY_PREFIX ${c.keyPrefix}`;
}

function config(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // every problem at once, one line each
    fail(err.problems.map((p) => `configuration error: ${p}`).join(`\npin-auth check ${mode}: `));
  }
}

async function configCheck(c: Config): Promise<void> {
  const warnings = configWarnings(c);
  const redis = connect(c.redis, 'command', 'pin-auth-check');
  try {
    await waitReady(redis, 4000).then(
      async () => warnings.push(...(await redisWarnings(redis, c, Date.now() + c.metricsIntervalMs + 500))),
      () => warnings.push('Redis does not answer: its eviction policy and the instance names in use are unchecked'),
    );
  } finally {
    redis.disconnect();
  }
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`ok (${where(c)})\n`);
}

async function web(c: Config): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${c.port}/health`, { signal: AbortSignal.timeout(4000) }).catch((err: unknown) => fail(String(err)));
  if (!res.ok) fail(`/health answered ${res.status}`);
}

async function worker(c: Config): Promise<void> {
  const redis = connect(c.redis, 'command', 'pin-auth-check');
  try {
    await waitReady(redis, 4000).catch(() => fail(`Redis does not answer (${where(c)})`));
    const stored = await redis.hget(keys(c.keyPrefix).metricsNodes(), c.instanceName);
    const at = stored === null ? undefined : (JSON.parse(stored) as { at?: unknown }).at;
    if (typeof at !== 'number') fail(`no metrics snapshot from ${c.instanceName} yet (${where(c)})`);
    // three missed intervals: the node is stuck or cut off
    const age = Date.now() - at;
    if (age > 3 * c.metricsIntervalMs + 2000) fail(`last snapshot from ${c.instanceName} is ${Math.round(age / 1000)} s old (${where(c)})`);
  } finally {
    redis.disconnect();
  }
}

const c = config();
if (mode === 'config') await configCheck(c);
else if (mode === 'web') await web(c);
else await worker(c);
process.exit(0);
