import { Queue, type ConnectionOptions } from 'bullmq';
import { QUEUE, type ExpiryJob, type InboundJob, type OutboundJob } from './jobs.js';

/** Producers of the three queues, sharing one connection, all under KEY_PREFIX. */
export interface Queues {
  inbound: Queue<InboundJob>;
  expiry: Queue<ExpiryJob>;
  outbound: Queue<OutboundJob>;
  all(): Queue[];
  close(): Promise<void>;
}

/** `prefixOf(queue)`: the queue's BullMQ prefix (keys.ts queuePrefix: one hash tag per queue). */
export function createQueues(connection: ConnectionOptions, prefixOf: (queue: string) => string, outboundAttempts: number): Queues {
  const inbound = new Queue<InboundJob>(QUEUE.inbound, {
    connection,
    prefix: prefixOf(QUEUE.inbound),
    defaultJobOptions: {
      attempts: 10,
      backoff: { type: 'exponential', delay: 200 },
      removeOnComplete: { age: 3600, count: 5000 },
      removeOnFail: { age: 7 * 86400 },
    },
  });
  const expiry = new Queue<ExpiryJob>(QUEUE.expiry, {
    connection,
    prefix: prefixOf(QUEUE.expiry),
    defaultJobOptions: {
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      removeOnFail: { age: 86400 },
    },
  });
  const outbound = new Queue<OutboundJob>(QUEUE.outbound, {
    connection,
    prefix: prefixOf(QUEUE.outbound),
    defaultJobOptions: {
      attempts: outboundAttempts,
      backoff: { type: 'outbound' },
      removeOnComplete: { age: 86400, count: 5000 },
      removeOnFail: { age: 7 * 86400 },
    },
  });
  return {
    inbound,
    expiry,
    outbound,
    all: () => [inbound, expiry, outbound],
    close: async () => {
      await Promise.all([inbound.close(), expiry.close(), outbound.close()]);
    },
  };
}
