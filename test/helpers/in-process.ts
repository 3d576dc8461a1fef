import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import winston from 'winston';
import { announce, awaitRedis, compose, type Bootstrapped } from '../../src/bin/bootstrap.js';
import { startWeb } from '../../src/bin/web-role.js';
import { startWorker } from '../../src/bin/worker-role.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/observability/logger.js';
import { captureOutput, type CapturedOutput } from './output.js';
import { freePort } from './processes.js';
import { REDIS_URL } from './redis.js';

/** What a test can do with a node of a stack, whether it runs in a child process or in the test's own. */
export interface ServiceNode {
  role: 'web' | 'worker' | 'all';
  /** set for web and all */
  port: number;
  url: string;
  /** every line the node logged */
  output(): string;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** A node composed in the test's own process (no child, no signals): stop() is its graceful shutdown. */
export interface InProcessNode extends ServiceNode {
  role: 'web' | 'worker';
  /** what bootstrap() would have made: config, log, services, metrics */
  composed: Bootstrapped;
  /** the web role's server and realtime, the worker role's host, and the node's services closed */
  stop(): Promise<void>;
}

/** What a logger writes, into a capture. */
function captured(): CapturedOutput & { stream: Writable } {
  const out = captureOutput();
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      out.append(chunk.toString());
      done();
    },
  });
  return { ...out, stream };
}

/**
 * A web node or a worker as its binary would run it (compose, wait for Redis, the role, the
 * banner) on an environment of its own: the same defaults startProcess gives a child, the port
 * the system picks on 127.0.0.1 unless PORT is given. Its log lines (same format, same level)
 * are kept for output() instead of going to the console.
 */
export async function startInProcess(role: 'web' | 'worker', env: Record<string, string>): Promise<InProcessNode> {
  // A web node's port is chosen before its config is read, as for a child process: URLs the
  // config derives from PORT (the default OIDC_ISSUER) must name the port it listens on.
  // PORT=0 would work as well (startWeb reports the port it got) where nothing derives from it.
  const port = role === 'web' ? (env.PORT ?? String(await freePort())) : '0';
  const config = loadConfig({
    NODE_ENV: 'test',
    REDIS_URL,
    LOG_LEVEL: 'info',
    CHAT_REPLY_KINDS: 'all',
    INSTANCE_NAME: `${role}-${randomBytes(3).toString('hex')}`,
    ...env,
    PORT: port,
    HOST: '127.0.0.1',
  });
  const log = createLogger({ level: config.logLevel, production: config.production, role, instance: config.instanceName });
  const lines = captured();
  // the same format as the console's, into the capture
  log.clear();
  log.add(new winston.transports.Stream({ stream: lines.stream }));
  const b = compose(role, config, log);
  let stopRole: () => Promise<void> = async () => undefined;
  let listening = 0;
  try {
    await awaitRedis(b);
    if (role === 'web') {
      const web = await startWeb(b);
      listening = web.port;
      stopRole = () => web.stop();
    } else {
      const worker = startWorker(b);
      stopRole = () => worker.stop();
    }
    announce(b, role === 'web' ? listening : undefined);
  } catch (err) {
    await stopRole();
    await b.snapshots.stop();
    await b.services.close();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    role,
    port: listening,
    url: `http://127.0.0.1:${listening}`,
    composed: b,
    output: () => lines.text(),
    waitForOutput: (pattern, timeoutMs = 60000) => lines.waitFor(pattern, timeoutMs, `${role} ${config.instanceName}`),
    stop() {
      // once, in onShutdown's order: the role, the last snapshot, the services
      stopped ??= (async () => {
        log.info('shutting down', { signal: 'in-process' });
        await stopRole();
        await b.snapshots.stop();
        await b.services.close();
        log.info('stopped');
      })();
      return stopped;
    },
  };
}
