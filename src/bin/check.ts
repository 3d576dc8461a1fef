import { ConfigError, loadConfig, type Config } from '../config.js';
import { connect, waitReady } from '../redis/connection.js';
import { keys } from '../redis/keys.js';

/**
 * What a container platform asks of a process from outside, each a one-shot command that exits
 * 0 (yes) or 1 (no, with one line on stderr):
 *   check.js config  the environment loads (Compose runs it once before any node starts, so a
 *                    missing secret is one clear line instead of every node crash-looping)
 *   check.js web     this container's web node answers GET /health with 200
 *   check.js worker  this container's worker wrote its metrics snapshot lately: the snapshot is
 *                    written on a timer by a live event loop through a working Redis link
 */
const mode = process.argv[2];

function fail(message: string): never {
  process.stderr.write(`pin-auth check ${mode ?? ''}: ${message}\n`);
  process.exit(1);
}

function config(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    throw err;
  }
}

async function web(c: Config): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${c.port}/health`, { signal: AbortSignal.timeout(4000) }).catch((err: unknown) => fail(String(err)));
  if (!res.ok) fail(`/health answered ${res.status}`);
}

async function worker(c: Config): Promise<void> {
  const redis = connect(c.redis, 'command', 'pin-auth-check');
  try {
    await waitReady(redis, 4000).catch(() => fail('Redis does not answer'));
    const stored = await redis.hget(keys(c.keyPrefix).metricsNodes(), c.instanceName);
    const at = stored === null ? undefined : (JSON.parse(stored) as { at?: unknown }).at;
    if (typeof at !== 'number') fail(`no metrics snapshot from ${c.instanceName} yet`);
    // three missed intervals: the node is stuck or cut off
    const age = Date.now() - at;
    if (age > 3 * c.metricsIntervalMs + 2000) fail(`last snapshot from ${c.instanceName} is ${Math.round(age / 1000)} s old`);
  } finally {
    redis.disconnect();
  }
}

const c = config();
if (mode === 'web') await web(c);
else if (mode === 'worker') await worker(c);
else if (mode !== 'config') fail('usage: check.js config|web|worker');
process.exit(0);
