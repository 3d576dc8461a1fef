import { answers, freePort, spawnNode, stopChild, waitUntil, type Child } from './processes.js';
import { QueueProbe, REDIS_URL } from './redis.js';

/**
 * The simplest pipeline (simple-pipeline.ts) as the service runs: two web nodes and one worker,
 * each a child process, under the benchmark's KEY_PREFIX (its keys are deleted with the
 * service's) and the same webhook secret, so the same signed webhooks and socket registrations
 * drive both.
 */
const SCRIPT = 'dist/scripts/bench/simple-pipeline.js';

export class SimplePipeline {
  readonly webs: Child[] = [];
  worker: Child | undefined;
  /** its login queue, for the benchmark's readiness and idle checks */
  readonly queue: QueueProbe;

  private constructor(private readonly env: Record<string, string>) {
    this.queue = new QueueProbe('login', `${env.KEY_PREFIX}:simple`);
  }

  static async start(keyPrefix: string, webhookSecret: string): Promise<SimplePipeline> {
    const p = new SimplePipeline({ NODE_ENV: 'production', REDIS_URL, KEY_PREFIX: keyPrefix, WEBHOOK_SECRET: webhookSecret });
    try {
      await Promise.all([p.startWeb('simple-web-1'), p.startWeb('simple-web-2'), p.startWorker()]);
    } catch (err) {
      await p.stop();
      throw err;
    }
    return p;
  }

  get urls(): string[] {
    return this.webs.map((w) => w.url);
  }

  private async startWeb(name: string): Promise<void> {
    const port = await freePort();
    const web = spawnNode(name, SCRIPT, { ...this.env, ROLE: 'web', PORT: String(port) }, [], port);
    this.webs.push(web);
    // web-1 first in the list: the benchmark's sockets go to urls[0], its webhooks to urls[1]
    this.webs.sort((a, b) => a.name.localeCompare(b.name));
    await waitUntil(web, () => answers(`${web.url}/health`));
  }

  private async startWorker(): Promise<void> {
    this.worker = spawnNode('simple-worker', SCRIPT, { ...this.env, ROLE: 'worker' });
    await waitUntil(this.worker, async () => (await this.queue.workers()) >= 1);
  }

  /** The last lines each process printed, if any. */
  output(): string[] {
    return [...this.webs, ...(this.worker ? [this.worker] : [])]
      .filter((c) => c.tail().trim())
      .map((c) => `${c.name}: ${c.tail().trim().split('\n').slice(-3).join(' | ')}`);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.webs, ...(this.worker ? [this.worker] : [])].map((c) => stopChild(c)));
    await this.queue.close().catch(() => undefined);
  }
}
