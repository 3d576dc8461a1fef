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
 * Erase removes the jobs whose data, return value or failure names the person, and the
 * events-stream entries that do: every finished inbound job (completed, failed), and every
 * outbound job not active (a reply not yet sent to them is not sent). An inbound job still
 * waiting is a message that arrived: it is left to run and, the links gone, makes a fresh
 * account (the next message from the phone does, docs/accounts.md); dropping it would lose the
 * message. An active job is left too: it is seconds from done. The expiry queue carries PIN
 * hashes only.
 */
type State = 'completed' | 'failed' | 'wait' | 'delayed' | 'prioritized' | 'waiting-children';
const FINISHED: readonly State[] = ['completed', 'failed'];
const NOT_ACTIVE: readonly State[] = [...FINISHED, 'wait', 'delayed', 'prioritized', 'waiting-children'];
const PAGE = 500;

interface Found {
  queue: Queue;
  id: string;
  state: string;
  timestamp: number;
  data: unknown;
}

async function jobsOf(queues: readonly { queue: Queue; states: readonly State[] }[], tokens: readonly string[]): Promise<Found[]> {
  const out: Found[] = [];
  for (const { queue, states } of queues) {
    for (const state of states) {
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

export function personJobs(redis: RedisClient, inbound: readonly Queue[], outbound: readonly Queue[]): Holding {
  const queues = [...inbound.map((queue) => ({ queue, states: FINISHED })), ...outbound.map((queue) => ({ queue, states: NOT_ACTIVE }))];
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
      for (const { queue } of queues) {
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
