import type { Queue } from 'bullmq';
import { type Holding, mentions, tokensOf, type Subject } from '../accounts/holdings.js';
import type { RedisClient } from '../redis/connection.js';

/**
 * The person's jobs in the queues (accounts/holdings.ts, a Holding handed in from this layer):
 * inbound jobs carry the chat message (phone, LID, BSUID, name, text), outbound ones the reply's
 * recipient and text, and a send-message job the user id. Finished ones stay for a while
 * (queues.ts: completed for an hour or a day, failed for 7 days), and each queue's events stream
 * repeats their ids and return values.
 *
 * Erase removes every job of any state but `active` whose data, return value or failure names the
 * person, and the events-stream entries that do. An active job is left: it is seconds from done,
 * and what it writes afterwards is a new account's (its message arrived after the links went),
 * or gone with the job's own removeOnComplete. The expiry queue carries PIN hashes only.
 */
const STATES = ['completed', 'failed', 'wait', 'delayed', 'prioritized', 'waiting-children'] as const;
const PAGE = 500;

interface Found {
  queue: Queue;
  id: string;
  state: string;
  timestamp: number;
  data: unknown;
}

async function jobsOf(queues: readonly Queue[], tokens: readonly string[]): Promise<Found[]> {
  const out: Found[] = [];
  for (const queue of queues) {
    for (const state of STATES) {
      for (let start = 0; ; start += PAGE) {
        const page = await queue.getJobs([state], start, start + PAGE - 1, true);
        for (const job of page) {
          if (!job?.id) continue;
          const text = [JSON.stringify(job.data ?? null), JSON.stringify(job.returnvalue ?? null), job.failedReason ?? '', ...(job.stacktrace ?? [])].join(
            '\n',
          );
          if (mentions(text, tokens)) out.push({ queue, id: job.id, state, timestamp: job.timestamp, data: job.data });
        }
        if (page.length < PAGE) break;
      }
    }
  }
  return out;
}

export function personJobs(redis: RedisClient, queues: readonly Queue[]): Holding {
  return {
    name: 'jobs',
    async export(s: Subject) {
      const found = await jobsOf(queues, tokensOf(s.person));
      return found.map((j) => ({ queue: j.queue.name, id: j.id, state: j.state, createdAt: new Date(j.timestamp).toISOString(), data: j.data }));
    },
    async erase(s: Subject) {
      const tokens = tokensOf(s.person);
      let removed = 0;
      for (const j of await jobsOf(queues, tokens)) {
        // a job that went active meanwhile is locked: left (see above)
        removed += await j.queue.remove(j.id).catch(() => 0);
      }
      for (const queue of queues) {
        const stream = queue.keys.events!;
        let start = '-';
        for (;;) {
          const rows = await redis.xrange(stream, start, '+', 'COUNT', 1000);
          const doomed = rows.filter(([, kv]) => mentions(kv.join('\n'), tokens)).map(([id]) => id);
          if (doomed.length > 0) removed += await redis.xdel(stream, ...doomed);
          if (rows.length < 1000) break;
          start = `(${rows[rows.length - 1]![0]}`;
        }
      }
      return removed;
    },
  };
}
