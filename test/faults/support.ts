import { FaultProxy } from '../helpers/fault-proxy.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startStack, type Stack } from '../helpers/processes.js';

/**
 * A stack whose every Redis connection goes through a fault proxy to a private redis-server:
 * the shared Redis never sees a fault. Stop with `stop()`.
 */
export interface FaultStack {
  redis: PrivateRedis;
  proxy: FaultProxy;
  stack: Stack;
  stop(): Promise<void>;
}

export async function startFaultStack(name: string, env: Record<string, string> = {}, redisArgs: string[] = []): Promise<FaultStack> {
  const redis = await PrivateRedis.start(redisArgs);
  const proxy = await FaultProxy.start(redis.port);
  try {
    const stack = await startStack({ name, webs: 1, workers: 1, env: { REDIS_URL: proxy.url, CHAT_REPLIES: 'false', ...env } });
    return {
      redis,
      proxy,
      stack,
      async stop() {
        proxy.pass();
        await stack.stop().catch(() => undefined);
        await proxy.close();
        await redis.kill();
      },
    };
  } catch (err) {
    await proxy.close();
    await redis.kill();
    throw err;
  }
}

/** Lines of a process' output that look like a raw stack trace (an uncaught error printed). */
export function rawStackLines(output: string): string[] {
  return output.split('\n').filter((l) => /^(\w*Error\b|\s+at )|"stack":"/.test(l));
}
