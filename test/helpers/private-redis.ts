import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { eventually } from './http.js';
import { freePort } from './processes.js';

/**
 * A redis-server of a test's own, for outage tests: the shared Redis must never go down.
 * `kill()` takes it away at once (SIGKILL); `start()` brings it back on the same port, empty
 * unless its options keep data (AOF in a directory).
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    private readonly args: string[],
  ) {}

  /**
   * `args` are extra redis-server options (e.g. `--maxmemory 2mb`, or `--appendonly yes --dir
   * <tmp>` for a server that keeps its data across kill() and start()).
   */
  static async start(args: string[] = []): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort(), args);
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.args], {
      stdio: 'ignore',
    });
    this.child = child;
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } finally {
        probe.disconnect();
      }
    }, 10000);
  }

  /** A client straight to this server (not through any proxy), for the test's own commands. */
  client(): Redis {
    const c = new Redis(this.url, { maxRetriesPerRequest: 1 });
    c.on('error', () => undefined);
    return c;
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
