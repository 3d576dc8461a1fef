import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { createQueues } from '../queues/queues.js';
import { connect, waitReady } from '../redis/connection.js';
import { keys as makeKeys } from '../redis/keys.js';
import { redisWhere } from './banner.js';

/**
 * `npm run replay-inbound -- [--dry-run]` (`node dist/src/bin/replay-inbound.js`): puts every
 * chat message whose job failed for good back on its inbound queue, with its attempts reset, once
 * the cause is fixed. A replayed job is the same job (same message id and nonce), so a message
 * that did log in meanwhile is not logged in twice; a PIN that expired meanwhile gets the
 * "expired" reply. Reads the same environment as the service (REDIS_URL, KEY_PREFIX,
 * INBOUND_PARTITIONS). Prints the Redis and prefix it acts on, one line per queue, and exits 0
 * (1 when Redis is unreachable or the configuration is wrong, 2 on a wrong command line).
 */
const PAGE = 500;

const USAGE = `usage: npm run replay-inbound -- [--dry-run]
       node dist/src/bin/replay-inbound.js [--dry-run]

Puts every inbound chat message whose job failed for good back on its queue (attempts reset).
Acts on the Redis and KEY_PREFIX of the environment, as the service does.
  --dry-run  count what would be replayed, change nothing
  --help     this text
`;

function usage(message: string): never {
  process.stderr.write(`replay-inbound: ${message}\n${USAGE}`);
  process.exit(2);
}

let dryRun = false;
try {
  const { values, positionals } = parseArgs({ options: { 'dry-run': { type: 'boolean' }, help: { type: 'boolean' } }, allowPositionals: true });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (positionals.length > 0) usage(`unexpected argument "${positionals[0]}"`);
  // `npm run replay-inbound --dry-run` (no `--`) hands the flag to npm, which passes it on as npm_config_dry_run
  dryRun = values['dry-run'] === true || process.env.npm_config_dry_run === 'true';
} catch (err) {
  usage(err instanceof Error ? err.message : String(err));
}

async function main(): Promise<void> {
  const config = loadConfig();
  process.stdout.write(`replay-inbound${dryRun ? ' (dry run: nothing is changed)' : ''}: redis ${redisWhere(config)}, KEY_PREFIX ${config.keyPrefix}\n`);
  const keys = makeKeys(config.keyPrefix);
  const redis = connect(config.redis, 'worker', `pinauth:replay:${config.instanceName}`);
  const queues = createQueues(redis, keys.queuePrefix, config.outboundAttempts, config.inboundPartitions);
  try {
    await waitReady(redis, 10_000);
    let total = 0;
    for (const queue of queues.inbound) {
      let replayed = 0;
      // retried jobs leave the failed set, so the first page is read again until it is empty
      for (;;) {
        const failed = await queue.getFailed(dryRun ? replayed : 0, (dryRun ? replayed : 0) + PAGE - 1);
        if (failed.length === 0) break;
        if (!dryRun) await Promise.all(failed.map((job) => job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })));
        replayed += failed.length;
      }
      total += replayed;
      process.stdout.write(`${queue.name}: ${replayed} failed job${replayed === 1 ? '' : 's'} ${dryRun ? 'would be replayed' : 'replayed'}\n`);
    }
    process.stdout.write(`${total} in all\n`);
  } finally {
    await queues.close().catch(() => undefined);
    redis.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`replay-inbound: ${err instanceof ConfigError ? 'configuration error: ' : ''}${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
