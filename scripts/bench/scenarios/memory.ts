import { registerRequest, type BenchContext } from '../context.js';
import { isOk, runAll } from '../load.js';
import { rssBytes } from '../processes.js';
import { benchRedis, prefixMemory, usedMemory } from '../redis.js';
import { closeAll, connectAll } from '../sockets.js';
import { round, sleep } from '../stats.js';

/**
 * Memory: Redis bytes per active registration (INFO used_memory before and after N
 * registrations; also the sum of MEMORY USAGE over the benchmark's own keys, which other
 * tenants of a shared Redis cannot disturb), and the resident memory of each process with
 * those registrations and M idle sockets on the first web node.
 */
export interface MemoryFigures {
  registrations: number;
  bytesPerRegistration: number;
  prefixBytesPerRegistration: number;
  /** where the prefix's bytes per registration go, by key class (bytes, keys added per registration) */
  breakdown: Record<string, { bytes: number; keys: number }>;
  idleSockets: number;
  rss: { web1Start: number; web1Idle: number; web1: number; web2: number; worker: number | null };
}

const MB = 1024 * 1024;

type ByClass = Awaited<ReturnType<typeof prefixMemory>>;

const total = (m: ByClass): number => [...m.values()].reduce((a, e) => a + e.bytes, 0);

function perRegistration(before: ByClass, after: ByClass, n: number): MemoryFigures['breakdown'] {
  const out: MemoryFigures['breakdown'] = {};
  for (const [c, a] of after) {
    const b = before.get(c) ?? { keys: 0, bytes: 0 };
    const bytes = round((a.bytes - b.bytes) / n, 1);
    if (Math.abs(bytes) >= 1) out[c] = { bytes, keys: round((a.keys - b.keys) / n, 3) };
  }
  return Object.fromEntries(Object.entries(out).sort(([, x], [, y]) => y.bytes - x.bytes));
}

/** Median of three readings a moment apart: allocator noise shows up as a lone outlier. */
async function settledUsedMemory(redis: ReturnType<typeof benchRedis>): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    readings.push(await usedMemory(redis));
    await sleep(100);
  }
  return readings.sort((a, b) => a - b)[1]!;
}

/** Median of five readings over two seconds: a garbage collection mid-way shows up as one outlier. */
async function settledRss(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(400);
    readings.push(rssBytes(pid));
  }
  return readings.sort((a, b) => a - b)[2]!;
}

export async function memory(ctx: BenchContext): Promise<MemoryFigures> {
  const { stack, sizes, seq } = ctx;
  if (!stack.worker) await stack.startWorker();
  const urls = stack.urls;
  const redis = benchRedis();
  try {
    const n = sizes.registrations;
    ctx.log(`memory: ${n} registrations, then ${sizes.idleSockets} idle sockets on web-1`);
    const beforePrefix = await prefixMemory(redis, stack.prefix);
    const before = await settledUsedMemory(redis);
    const ns = Array.from({ length: n }, () => seq.take());
    const answers = await runAll(n, 32, (i) => ({ url: urls[i % urls.length]!, spec: registerRequest(ns[i]!) }));
    const registered = answers.filter(isOk).length;
    const after = await settledUsedMemory(redis);
    const afterPrefix = await prefixMemory(redis, stack.prefix);

    const web1 = stack.webs[0]!;
    const web1Idle = rssBytes(web1.pid);
    const sockets = await connectAll([web1.url], sizes.idleSockets);
    try {
      const web1Rss = await settledRss(web1.pid);
      return {
        registrations: registered,
        bytesPerRegistration: round((after - before) / registered),
        prefixBytesPerRegistration: round((total(afterPrefix) - total(beforePrefix)) / registered),
        breakdown: perRegistration(beforePrefix, afterPrefix, registered),
        idleSockets: sockets.length,
        rss: {
          web1Start: round((stack.startRss.get(web1.name) ?? NaN) / MB, 1),
          web1Idle: round(web1Idle / MB, 1),
          web1: round(web1Rss / MB, 1),
          web2: round(rssBytes(stack.webs[1]!.pid) / MB, 1),
          worker: stack.worker ? round(rssBytes(stack.worker.pid) / MB, 1) : null,
        },
      };
    } finally {
      closeAll(sockets);
    }
  } finally {
    redis.disconnect();
  }
}
