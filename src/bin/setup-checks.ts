import { Cluster, type Redis } from 'ioredis';
import type { Config } from '../config.js';
import { waitReady, type RedisClient } from '../redis/connection.js';
import { keys } from '../redis/keys.js';

/**
 * Set-ups that load but cannot work as meant, each a sentence for a warning: `check.js config`
 * lists them, and every process logs them at start (bootstrap.ts).
 */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.loginConfirmation && config.gateways.length === 0) {
    warnings.push('LOGIN_CONFIRMATION is on but MESSAGING_PROVIDER=log sends no message: the question never reaches the person, so nobody can sign in');
  }
  return warnings;
}

/** The eviction policy of each primary: anything but noeviction may drop queue and login keys. */
export async function evictionWarnings(redis: RedisClient): Promise<string[]> {
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const warnings: string[] = [];
  for (const node of nodes) {
    // INFO answers where CONFIG GET is renamed or refused (managed Redis)
    const policy = /^maxmemory_policy:(\S+)/m.exec(await node.info('memory'))?.[1];
    if (policy !== undefined && policy !== 'noeviction') {
      warnings.push(
        `Redis maxmemory-policy is ${policy}, not noeviction: under memory pressure Redis deletes queue jobs and logins (set maxmemory-policy noeviction)`,
      );
    }
  }
  return [...new Set(warnings)];
}

/**
 * Another live process under the same INSTANCE_NAME and KEY_PREFIX: its metrics snapshot is
 * written again while we watch, until `until` (epoch ms; before the caller's own first snapshot,
 * so that one is never mistaken for another's). A process that just stopped writes no more. The
 * two would merge into one node in /metrics.
 */
export async function duplicateInstanceWarning(redis: RedisClient, config: Config, until: number): Promise<string | undefined> {
  const key = keys(config.keyPrefix).metricsNodes();
  const at = async (): Promise<number | undefined> => {
    const stored = await redis.hget(key, config.instanceName);
    const value = stored === null ? undefined : (JSON.parse(stored) as { at?: unknown }).at;
    return typeof value === 'number' ? value : undefined;
  };
  const first = await at();
  // nothing written lately: nobody to wait for
  if (first === undefined || Date.now() - first > 3 * config.metricsIntervalMs || Date.now() >= until) return undefined;
  await new Promise((resolve) => setTimeout(resolve, until - Date.now()).unref());
  const second = await at();
  if (second === undefined || second === first) return undefined;
  return (
    `another live process uses INSTANCE_NAME=${config.instanceName} under KEY_PREFIX=${config.keyPrefix} (its metrics snapshot is still being written): ` +
    'give each process a name of its own, or the two merge into one node in /metrics'
  );
}

/** Both Redis checks, in parallel, once Redis is ready; none when it cannot be asked (that is reported elsewhere). */
export async function redisWarnings(redis: RedisClient, config: Config, until: number): Promise<string[]> {
  if (
    !(await waitReady(redis, 10_000).then(
      () => true,
      () => false,
    ))
  )
    return [];
  const [eviction, duplicate] = await Promise.all([
    evictionWarnings(redis).catch(() => []),
    duplicateInstanceWarning(redis, config, until).catch(() => undefined),
  ]);
  return [...eviction, ...(duplicate === undefined ? [] : [duplicate])];
}
