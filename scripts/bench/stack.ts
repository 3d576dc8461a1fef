import { randomBytes } from 'node:crypto';
import { startBaseline } from './baseline.js';
import { SimplePipeline } from './simple-baseline.js';
import { answers, freePort, procfileScript, rssBytes, spawnNode, stopChild, waitUntil, type Child } from './processes.js';
import { keys } from '../../src/redis/keys.js';
import { benchRedis, cleanPrefix, QueueProbe, REDIS_URL } from './redis.js';

/**
 * The service under test (and the bare Koa baseline and the simplest pipeline beside it): two web nodes and (when asked) one worker, started from the built
 * JavaScript as production runs it (several workers for the scaling curve), under a KEY_PREFIX of the benchmark's own, with rate limits
 * raised so they never answer for the load generator.
 */
const RAISED_LIMITS: Record<string, string> = {
  RATE_REGISTER_PER_MINUTE: '1000000',
  RATE_CHECK_PER_MINUTE: '1000000',
  RATE_CHECK_PIN_PER_SECOND: '1000000',
  RATE_CHECK_PIN_BURST: '1000000',
  RATE_UNKNOWN_PIN_PER_10_MINUTES: '1000000',
  RATE_SEND_PER_MINUTE: '1000000',
  RATE_REPLY_PER_MINUTE: '1000000',
  SENDER_MESSAGES_PER_MINUTE: '1000000',
  RATE_SOCKET_EVENTS_PER_SECOND: '1000000',
  // the load generator is one address with up to --connections webhooks in flight
  WEBHOOK_IN_FLIGHT_PER_IP: '1000000',
  // and opens every socket of the memory curve (up to 10,000) from that one address
  SOCKETS_PER_IP: '1000000',
};

export interface StackOptions {
  /** extra node flags for the service processes, e.g. --cpu-prof */
  nodeArgs: string[];
  /** told of every service process started (to match profiles to roles) */
  onStart?: (name: string, pid: number) => void;
}

/**
 * On Ctrl-C or SIGTERM: stop the stack's processes, delete every key under its prefix, exit 130.
 * The run itself then fails (its processes are gone) and reaches its own clean-up; `settle`,
 * awaited there, hands the exit to the interrupt instead of writing results or another code.
 */
export function stopOnInterrupt(stack: Stack, log: (message: string) => void): { settle(): Promise<void> } {
  let exiting: Promise<unknown> | undefined;
  const interrupt = (): void => {
    log('interrupted: stopping the stack and cleaning the prefix');
    exiting = stack.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  return {
    async settle() {
      if (exiting) await exiting;
    },
  };
}

export class Stack {
  readonly prefix = `bench-${randomBytes(4).toString('hex')}`;
  /** BullMQ prefix of the inbound queue (keys.ts queuePrefix) */
  readonly inboundPrefix = keys(this.prefix).queuePrefix('inbound');
  readonly webhookSecret = randomBytes(24).toString('base64url');
  readonly webs: Child[] = [];
  /** the running worker processes */
  readonly workers: Child[] = [];
  readonly inbound: QueueProbe;
  /** RSS of each web node once it first served, bytes */
  readonly startRss = new Map<string, number>();
  private readonly env: Record<string, string>;
  private workerCount = 0;

  constructor(private readonly opts: StackOptions) {
    this.env = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      REDIS_URL,
      KEY_PREFIX: this.prefix,
      JWT_SECRET: randomBytes(32).toString('base64url'),
      // ES256 with a generated key unless the caller picks another (JWT_ALGORITHM=HS256 npm run bench compares)
      ...(process.env.JWT_ALGORITHM ? { JWT_ALGORITHM: process.env.JWT_ALGORITHM } : {}),
      WEBHOOK_SECRET: this.webhookSecret,
      CHAT_REPLIES: 'false',
      // nothing expires during the run: expiry work would disturb the figures
      PIN_TTL_SECONDS: '900',
      // the load generator picks its own PINs and emoji strings (it sends the chat messages
      // without reading each answer); a drawn string costs the same one script call
      EMOJI_CHOICE: 'client',
      PIN_MIN_BITS: '0',
      ...RAISED_LIMITS,
    };
    this.inbound = new QueueProbe('inbound', this.inboundPrefix);
  }

  /** The environment a service process of this stack runs with (e.g. to start one under a tool). */
  serviceEnv(name: string, port: number): Record<string, string> {
    return { ...this.env, PORT: String(port), INSTANCE_NAME: this.instanceName(name) };
  }

  /**
   * A service process's INSTANCE_NAME (its field in the metrics snapshots, the end of its Redis
   * client names) from its name here: the stack's prefix first, unique beside another run.
   */
  instanceName(name: string): string {
    return `${this.prefix}-${name}`;
  }

  get urls(): string[] {
    return this.webs.map((w) => w.url);
  }

  async startWebs(count: number): Promise<void> {
    const webCmd = procfileScript('web');
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const port = await freePort();
        const name = `web-${i + 1}`;
        const web = spawnNode(name, webCmd.script, this.serviceEnv(name, port), [...webCmd.nodeArgs, ...this.opts.nodeArgs], port);
        this.webs.push(web);
        this.opts.onStart?.(web.name, web.pid);
        await waitUntil(web, () => answers(`${web.url}/health`));
        this.startRss.set(web.name, rssBytes(web.pid));
      }),
    );
  }

  /** The first running worker process, if any. */
  get worker(): Child | undefined {
    return this.workers[0];
  }

  /** Starts one worker process and resolves once it serves the inbound queue. */
  async startWorker(): Promise<Child> {
    const [worker] = await this.startWorkers(1);
    return worker!;
  }

  /**
   * Starts `count` worker processes side by side; resolves once every one serves the inbound
   * queue. `env` overrides the stack's settings for these workers only (e.g. LOGIN_CONFIRMATION).
   */
  async startWorkers(count: number, env: Record<string, string> = {}): Promise<Child[]> {
    const before = await this.inbound.workers();
    const workerCmd = procfileScript('worker');
    const started = Array.from({ length: count }, () => {
      const name = `worker-${++this.workerCount}`;
      const workerEnv = { ...this.env, ...env, PORT: '0', INSTANCE_NAME: this.instanceName(name) };
      const worker = spawnNode(name, workerCmd.script, workerEnv, [...workerCmd.nodeArgs, ...this.opts.nodeArgs]);
      this.workers.push(worker);
      this.opts.onStart?.(worker.name, worker.pid);
      return worker;
    });
    await Promise.all(started.map((w) => waitUntil(w, async () => (await this.inbound.workers()) >= before + count)));
    return started;
  }

  /** Graceful stop of every worker (active jobs finish); jobs posted meanwhile wait in Redis. */
  async stopWorkers(): Promise<void> {
    const stopping = this.workers.splice(0);
    await Promise.all(
      stopping.map(async (worker) => {
        await stopChild(worker);
        if (worker.tail().trim()) this.printed.push(`${worker.name}: ${worker.tail().trim().split('\n').slice(-3).join(' | ')}`);
      }),
    );
  }

  /** The bare Koa baseline, started on first use and kept for the run (stopped with the stack). */
  baseline(): Promise<Child> {
    this.baselineChild ??= startBaseline();
    return this.baselineChild;
  }

  private baselineChild: Promise<Child> | undefined;

  /** The simplest pipeline (simple-pipeline.ts), started on first use and kept for the run (stopped with the stack). */
  simplePipeline(): Promise<SimplePipeline> {
    this.simple ??= SimplePipeline.start(this.prefix, this.webhookSecret);
    return this.simple;
  }

  private simple: Promise<SimplePipeline> | undefined;

  /** The last lines each process printed, if any. */
  output(): string[] {
    return this.printed;
  }

  /** What the processes printed (LOG_LEVEL=warn: warnings and errors only), for the log. */
  private readonly printed: string[] = [];

  private stopped: Promise<number> | undefined;

  /** Stops every process and deletes every key under the prefix (once: a second call gets the first's answer). */
  stop(): Promise<number> {
    this.stopped ??= this.stopAll();
    return this.stopped;
  }

  private async stopAll(): Promise<number> {
    const baseline = await this.baselineChild?.catch(() => undefined);
    const simple = await this.simple?.catch(() => undefined);
    await Promise.all([...this.webs.map((w) => stopChild(w)), this.stopWorkers(), baseline ? stopChild(baseline) : undefined, simple?.stop()]);
    for (const w of this.webs) if (w.tail().trim()) this.printed.push(`${w.name}: ${w.tail().trim().split('\n').slice(-3).join(' | ')}`);
    if (simple) this.printed.push(...simple.output());
    await this.inbound.close().catch(() => undefined);
    const redis = benchRedis();
    try {
      return await cleanPrefix(redis, this.prefix);
    } finally {
      redis.disconnect();
    }
  }
}
