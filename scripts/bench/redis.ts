import { createHash } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { SCRIPT_NAMES, scriptSource } from '../../src/redis/scripts.js';
import { now, percentile, sleep } from './stats.js';

/**
 * The benchmark's own view of Redis: its prefix (cleaned afterwards), memory figures, a count
 * of the jobs the worker completed, read from BullMQ's event stream as they happen, and the
 * workers' own counters (their metrics snapshots).
 */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function benchRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
}

/** Calls `each` with batches of the keys under `prefix` (SCAN: fine for a benchmark, not for the service). */
async function scanPrefix(redis: Redis, prefix: string, each: (keys: string[]) => Promise<void>): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 2000);
    cursor = next;
    if (found.length > 0) await each(found);
  } while (cursor !== '0');
}

/** Deletes every key under the prefix; returns how many. */
export async function cleanPrefix(redis: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  await scanPrefix(redis, prefix, async (keys) => {
    deleted += await redis.unlink(...keys);
  });
  return deleted;
}

/** INFO memory used_memory, bytes (the whole server: other tenants of a shared Redis move it too). */
export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  const m = /^used_memory:(\d+)\r?$/m.exec(info);
  if (!m) throw new Error('INFO memory has no used_memory');
  return Number(m[1]);
}

// BullMQ's own keys of a queue; any other key under `bull:{q<queue>}:<queue>:` is a job (hash or its logs).
const BULL_KEYS = new Set([
  'events',
  'delayed',
  'wait',
  'waiting',
  'paused',
  'active',
  'completed',
  'failed',
  'meta',
  'id',
  'marker',
  'stalled',
  'stalled-check',
  'limiter',
  'prioritized',
  'pc',
  'metrics',
  'de',
  'repeat',
]);

/** The class of a key for the memory breakdown: `reg`, `emo`, `bull:expiry:<job>`, `bull:expiry:events`… */
export function keyClass(prefix: string, key: string): string {
  const parts = key.slice(prefix.length + 1).split(':');
  if (parts[0] !== 'bull' || parts.length < 4) return parts[0]!;
  const rest = parts.slice(3).join(':');
  return `bull:${parts[2]}:${BULL_KEYS.has(rest) ? rest : '<job>'}`;
}

/** CPU time the Redis server has used so far, ms (the whole server: on a shared Redis, noisy). */
export async function redisCpuMs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([0-9.]+)\\r?$`, 'm').exec(info)?.[1] ?? NaN);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
}

/**
 * Commands the Redis server has run so far (INFO commandstats, every command's calls summed:
 * script calls and the commands each script ran). The whole server: exact on a private Redis,
 * an upper bound on a shared one.
 */
export async function redisCommands(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

/** Redis time of one script (or of the plain commands) while a phase ran. */
export interface ScriptTime {
  /** a script of src/redis/scripts/, `BullMQ`, `rate limiter` (rate-limiter-flexible's), or `commands` (every plain command) */
  name: string;
  calls: number;
  /** microseconds inside Redis, each call's own execution (SLOWLOG's duration) */
  us: number;
}

/** SLOWLOG GET's entry: id, time, duration (µs), the command and its arguments (truncated by Redis), client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];

/** The service's scripts by their SHA1, as EVALSHA names them. */
const SCRIPT_BY_SHA = new Map(SCRIPT_NAMES.map((name) => [createHash('sha1').update(scriptSource(name)).digest('hex'), name as string]));
const OWN_SCRIPTS = new Set<string>(SCRIPT_NAMES);

/**
 * Which script (or plain command) of the stack under `prefix` a SLOWLOG entry is; null for
 * anything else (the benchmark's own commands, other tenants of a shared Redis). The service's
 * connections are named `pinauth:<role>:<INSTANCE_NAME>` (src/redis/connection.ts), and the
 * stack's instance names start with its prefix; BullMQ's and the rate limiter's keys do. A
 * command a script runs is logged too (client `?:0`), and is inside that script's own entry.
 */
function scriptOf([, , , args, , client]: SlowlogEntry, prefix: string): string | null {
  const command = (args[0] ?? '').toLowerCase();
  const ours = client.startsWith('pinauth:') && client.includes(`:${prefix}-`);
  if (command === 'evalsha' || command === 'eval') {
    const keys = args.slice(3, 3 + Number(args[2] ?? 0));
    if (keys.some((k) => k.startsWith(`${prefix}:bull:`))) return 'BullMQ';
    if (keys.some((k) => k.startsWith(`${prefix}:rl:`))) return 'rate limiter';
    // EVALSHA names the script by its SHA1; an EVAL (a connection's first call) by its source's first line, `-- <name>: …`
    const own = command === 'evalsha' ? SCRIPT_BY_SHA.get(args[1] ?? '') : /^-- ([a-z-]+):/.exec(args[1] ?? '')?.[1];
    return ours && own !== undefined && OWN_SCRIPTS.has(own) ? own : null;
  }
  return ours ? 'commands' : null;
}

/** Held while a run uses SLOWLOG (a server-wide setting): another run on the same Redis waits its turn. */
const SLOWLOG_LOCK = 'pin-auth-bench:slowlog';
const SLOWLOG_LOCK_MS = 600_000;

/**
 * Redis's own time per script of the stack under `prefix` while `run` runs: SLOWLOG at
 * threshold 0 (every command logged with its execution time, the logging itself included), up
 * to `maxEntries` (other tenants' commands count against it); the server's settings are put
 * back after. `complete` is false when the log filled up (the oldest entries were dropped).
 */
export async function timeByScript<T>(
  redis: Redis,
  prefix: string,
  maxEntries: number,
  run: () => Promise<T>,
): Promise<{ result: T; times: ScriptTime[]; complete: boolean }> {
  while ((await redis.set(SLOWLOG_LOCK, prefix, 'PX', SLOWLOG_LOCK_MS, 'NX')) === null) await sleep(50);
  const setting = async (name: string): Promise<string> => ((await redis.config('GET', name)) as string[])[1] ?? '';
  const [threshold, maxLen] = [await setting('slowlog-log-slower-than'), await setting('slowlog-max-len')];
  try {
    await redis.config('SET', 'slowlog-max-len', String(maxEntries));
    await redis.slowlog('RESET');
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    const result = await run();
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    const entries = (await redis.slowlog('GET', -1)) as SlowlogEntry[];
    const by = new Map<string, ScriptTime>();
    for (const e of entries) {
      const name = scriptOf(e, prefix);
      if (name === null) continue;
      const t = by.get(name) ?? { name, calls: 0, us: 0 };
      t.calls++;
      t.us += e[2];
      by.set(name, t);
    }
    return { result, times: [...by.values()], complete: entries.length < maxEntries };
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', threshold);
    await redis.config('SET', 'slowlog-max-len', maxLen);
    await redis.slowlog('RESET');
    await redis.del(SLOWLOG_LOCK);
  }
}

/** MEMORY USAGE summed over the prefix's keys, by key class: this benchmark's data only. */
export async function prefixMemory(redis: Redis, prefix: string): Promise<Map<string, { keys: number; bytes: number }>> {
  const byClass = new Map<string, { keys: number; bytes: number }>();
  await scanPrefix(redis, prefix, async (keys) => {
    const pipe = redis.pipeline();
    for (const k of keys) pipe.memory('USAGE', k, 'SAMPLES', '0');
    const results = (await pipe.exec()) ?? [];
    keys.forEach((k, i) => {
      const [err, bytes] = results[i] ?? [];
      if (err || typeof bytes !== 'number') return;
      const c = keyClass(prefix, k);
      const entry = byClass.get(c) ?? { keys: 0, bytes: 0 };
      entry.keys++;
      entry.bytes += bytes;
      byClass.set(c, entry);
    });
  });
  return byClass;
}

/** What a worker process counted, from its last metrics snapshot (written when it stops). */
export interface WorkerTally {
  /** inbound jobs finished, by result (completed, failed) */
  jobs: Record<string, number>;
  /** inbound chat messages, by outcome (logged-in, no_match…) */
  outcomes: Record<string, number>;
}

interface SnapshotMetric {
  name: string;
  values: Array<{ value: number; labels: Record<string, string | number> }>;
}

/**
 * The inbound counts of the named worker processes, summed, from the metrics snapshots every
 * process writes into Redis (src/observability/snapshots.ts; a worker writes its last one as
 * it stops): the service's own counters, the figures an operator's dashboard shows. A worker
 * without a snapshot counts nothing (its logins show up as lost).
 */
export async function workerTally(redis: Redis, snapshotKey: string, nodes: readonly string[]): Promise<WorkerTally> {
  const tally: WorkerTally = { jobs: {}, outcomes: {} };
  const raw = nodes.length === 0 ? [] : await redis.hmget(snapshotKey, ...nodes);
  for (const text of raw) {
    if (text === null) continue;
    const { metrics } = JSON.parse(text) as { metrics: SnapshotMetric[] };
    for (const m of metrics) {
      for (const v of m.values) {
        if (m.name === 'pinauth_jobs_total' && v.labels.queue === 'inbound') add(tally.jobs, String(v.labels.result), v.value);
        if (m.name === 'pinauth_inbound_messages_total') add(tally.outcomes, String(v.labels.outcome), v.value);
      }
    }
  }
  return tally;
}

function add(into: Record<string, number>, key: string, n: number): void {
  into[key] = (into[key] ?? 0) + n;
}

export interface Completion {
  /** distinct job ids completed */
  distinct: number;
  /** completed events for a job id already seen (a job processed twice) */
  repeats: number;
  /** return values counted (the inbound processor returns its outcome) */
  outcomes: Record<string, number>;
  firstAt: number;
  lastAt: number;
}

/**
 * Counts `completed` events of a queue from the moment it is started. The event stream is
 * read as it grows, so trimming (BullMQ keeps about 10,000 events) never hides one from us,
 * unlike the completed set, which the service trims to 5,000 jobs.
 */
export class CompletionCounter {
  private readonly events: QueueEvents;
  private readonly seen = new Set<string>();
  private readonly result: Completion = { distinct: 0, repeats: 0, outcomes: {}, firstAt: NaN, lastAt: NaN };
  private waiters: Array<() => void> = [];

  constructor(queueName: string, bullPrefix: string) {
    this.events = new QueueEvents(queueName, { connection: { url: REDIS_URL }, prefix: bullPrefix, autorun: false });
    this.events.on('completed', ({ jobId, returnvalue }) => {
      const t = now();
      if (Number.isNaN(this.result.firstAt)) this.result.firstAt = t;
      this.result.lastAt = t;
      if (this.seen.has(jobId)) {
        this.result.repeats++;
        return;
      }
      this.seen.add(jobId);
      this.result.distinct++;
      const outcome = parseOutcome(returnvalue);
      this.result.outcomes[outcome] = (this.result.outcomes[outcome] ?? 0) + 1;
      for (const w of this.waiters) w();
    });
  }

  /** Starts reading from now on; resolves once the reader is connected. */
  async start(): Promise<void> {
    void this.events.run();
    await this.events.waitUntilReady();
    // the first XREAD is issued right after ready; give it a moment to be in place
    await new Promise((r) => setTimeout(r, 100));
  }

  snapshot(): Completion {
    return { ...this.result, outcomes: { ...this.result.outcomes } };
  }

  /** Resolves when `distinct` reaches `count`, or after `timeoutMs` (check the snapshot). */
  async waitFor(count: number, timeoutMs: number): Promise<Completion> {
    const deadline = now() + timeoutMs;
    while (this.result.distinct < count && now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(250, Math.max(1, deadline - now())));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.waiters = [];
    }
    return this.snapshot();
  }

  async close(): Promise<void> {
    await this.events.close();
  }
}

function parseOutcome(raw: unknown): string {
  if (typeof raw !== 'string') return String(raw);
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/** One leg of a login's path, p50 and p99 in ms (BullMQ's and the web's timestamps: 1 ms resolution). */
export interface Leg {
  p50: number;
  p99: number;
}

/**
 * Where a login's time goes, from the webhook's send to `auth-success` at the client: the web
 * node accepting it (send → `receivedAt`, the request's trip included), its add of the job
 * (→ the job's creation), the queue (→ taken), the worker (→ finished), and
 * the event's way back (→ the client: Redis pub/sub, the socket's node, the websocket).
 */
export interface LoginLegs {
  jobs: number;
  accept: Leg;
  intake: Leg;
  queued: Leg;
  worker: Leg;
  delivery: Leg;
}

/** A queue's job counts and worker count, on one connection kept for the run. */
export class QueueProbe {
  private readonly queue: Queue;

  constructor(queueName: string, bullPrefix: string) {
    this.queue = new Queue(queueName, { connection: { url: REDIS_URL }, prefix: bullPrefix });
  }

  counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
  }

  /**
   * The legs of the logins whose jobs finished after `sinceMs` (wall clock): `times` gives the
   * wall-clock send and arrival of a phone's login (undefined: not one of the measured ones).
   */
  async legs(sinceMs: number, limit: number, times: (phone: string) => { sent: number; event: number } | undefined): Promise<LoginLegs> {
    const jobs = (await this.queue.getJobs(['completed'], 0, limit - 1)).filter((j) => (j.finishedOn ?? 0) >= sinceMs);
    const spans: Record<Exclude<keyof LoginLegs, 'jobs'>, number[]> = { accept: [], intake: [], queued: [], worker: [], delivery: [] };
    let measured = 0;
    for (const j of jobs) {
      const data = j.data as { message?: { phone?: string | null }; receivedAt?: number };
      const t = times(data.message?.phone ?? '');
      if (!t || data.receivedAt === undefined || j.processedOn === undefined || j.finishedOn === undefined) continue;
      measured++;
      spans.accept.push(data.receivedAt - t.sent);
      spans.intake.push(j.timestamp - data.receivedAt);
      spans.queued.push(j.processedOn - j.timestamp);
      spans.worker.push(j.finishedOn - j.processedOn);
      spans.delivery.push(t.event - j.finishedOn);
    }
    const leg = (v: number[]): Leg => {
      v.sort((x, y) => x - y);
      return { p50: percentile(v, 0.5), p99: percentile(v, 0.99) };
    };
    return {
      jobs: measured,
      accept: leg(spans.accept),
      intake: leg(spans.intake),
      queued: leg(spans.queued),
      worker: leg(spans.worker),
      delivery: leg(spans.delivery),
    };
  }

  workers(): Promise<number> {
    return this.queue.getWorkersCount();
  }

  /**
   * Resolves once no job waits, runs or waits for a retry (the queue's counts, polled every
   * `everyMs`); rejects after `timeoutMs`. A job is active until BullMQ has finished it, so
   * every login of a drained backlog is done by then. Costs a few cheap reads a poll, where
   * a reader of the event stream costs the machine a tenth of a worker's logins/s (login.ts).
   */
  async idle(timeoutMs: number, everyMs = 5): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if ((c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error(`queue not idle after ${timeoutMs} ms: ${JSON.stringify(c)}`);
      await sleep(everyMs);
    }
  }

  /** Resolves once no job waits or runs; rejects after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await this.counts();
      if ((c.waiting ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0) === 0) return;
      if (Date.now() > deadline) throw new Error(`not drained after ${timeoutMs} ms: ${JSON.stringify(c)}`);
      await sleep(50);
    }
  }

  /** Holds the queue: workers take no job (the web still adds them), until resume(). */
  pause(): Promise<void> {
    return this.queue.pause();
  }

  resume(): Promise<void> {
    return this.queue.resume();
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
