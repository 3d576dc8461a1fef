import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { InboundJob, InboundMessage } from '../queues/jobs.js';

/**
 * Puts accepted messages on the `inbound` queue. The adds of one event-loop turn go to Redis
 * together (`addBulk`: one write and one round trip for all of them; a lone message still uses
 * `add`), so under a burst the web node spends its CPU on requests rather than on socket writes.
 * Each promise settles when its own job is in Redis (or the batch failed, answered 503).
 */
export interface Intake {
  add(message: InboundMessage, receivedAt: number): Promise<void>;
}

interface Pending {
  data: InboundJob;
  jobId: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Unique per accepted message (tells a retry of its job from a second delivery): a random
 * process id and a counter, cheaper than random bytes per message.
 */
const PROCESS_NONCE = randomBytes(9).toString('base64url');
let counter = 0;
const nextNonce = (): string => PROCESS_NONCE + (++counter).toString(36);

export function createIntake(queue: Queue<InboundJob>): Intake {
  let pending: Pending[] = [];

  const flush = (): void => {
    const batch = pending;
    pending = [];
    if (batch.length === 1) {
      const one = batch[0]!;
      queue.add('message', one.data, { jobId: one.jobId }).then(() => one.resolve(), one.reject);
      return;
    }
    queue
      .addBulk(batch.map((p) => ({ name: 'message', data: p.data, opts: { jobId: p.jobId } })))
      .then(
        () => batch.forEach((p) => p.resolve()),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
  };

  return {
    add(message, receivedAt) {
      return new Promise<void>((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        // the job id drops a repeat delivery while the first job is kept; later ones the worker drops
        pending.push({ data: { message, nonce: nextNonce(), receivedAt }, jobId: `m${message.id}`, resolve, reject });
      });
    },
  };
}
