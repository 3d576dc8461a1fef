import { randomBytes } from 'node:crypto';
import type { InboundJob, InboundMessage } from '../chat/message.js';
import { partitionList, partitionOf } from './partitions.js';

/**
 * Stores accepted messages in Redis, the web's only write per webhook. The messages of one
 * event-loop turn go together, as entries of the intake stream, in ONE script call (one socket
 * write, no per-job Lua or msgpack: BullMQ's add cost about 25 µs of CPU a job, this about 4).
 * The intake pump in the worker (queues/intake-pump.ts) moves them onto the `inbound` queue
 * with their deterministic job ids. Each promise settles when its message is in Redis (or the
 * write failed: answered 503, the gateway retries).
 */
export interface Intake {
  add(message: InboundMessage, receivedAt: number): Promise<void>;
}

/** Writes stream entries (InboundJob JSON each) in one round trip. */
export type PushEntries = (entries: string[]) => Promise<unknown>;

/** The `inbound` job id of a message: a repeat delivery maps to the same job, which BullMQ keeps once. */
export const inboundJobId = (messageId: string): string => `m${messageId}`;

interface Pending {
  entry: string;
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

export function createIntake(push: PushEntries): Intake {
  let pending: Pending[] = [];

  const flush = (): void => {
    const batch = pending;
    pending = [];
    push(batch.map((p) => p.entry)).then(
      () => batch.forEach((p) => p.resolve()),
      (err: unknown) => batch.forEach((p) => p.reject(err)),
    );
  };

  return {
    add(message, receivedAt) {
      return new Promise<void>((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        const job: InboundJob = { message, nonce: nextNonce(), receivedAt };
        pending.push({ entry: JSON.stringify(job), resolve, reject });
      });
    },
  };
}

/**
 * One intake per partition (INBOUND_PARTITIONS): a message goes to the stream of its id's
 * partition, so its pump adds it to the same partition's queue. One partition: one intake.
 */
export function createPartitionedIntake(partitions: number, push: (partition: number) => PushEntries): Intake {
  const intakes = partitionList(partitions).map((k) => createIntake(push(k)));
  if (intakes.length === 1) return intakes[0]!;
  return { add: (message, receivedAt) => intakes[partitionOf(message.id, intakes.length)]!.add(message, receivedAt) };
}
