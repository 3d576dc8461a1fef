import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { QUEUE, type ExpiryJob, type InboundJob, type OutboundJob } from './jobs.js';
import { INBOUND_ATTEMPTS } from './inbound-retry.js';
import { inboundQueueName, outboundQueueName, partitionList, partitionOf } from './partitions.js';

/** Producers of the queues, sharing one connection, all under KEY_PREFIX. */
export interface Queues {
  /** the inbound queue of each partition (one, named `inbound`, unless INBOUND_PARTITIONS > 1) */
  inbound: Queue<InboundJob>[];
  /** the inbound queue of a message's partition */
  inboundFor(messageId: string): Queue<InboundJob>;
  expiry: Queue<ExpiryJob>;
  /** the outbound queue of each partition (one, named `outbound`, unless OUTBOUND_PARTITIONS > 1) */
  outbound: Queue<OutboundJob>[];
  /** the outbound queue of a job id's partition */
  outboundFor(jobId: string): Queue<OutboundJob>;
  all(): Queue[];
  close(): Promise<void>;
}

/** `prefixOf(queue)`: the queue's BullMQ prefix (keys.ts queuePrefix: one hash tag per queue). */
export function createQueues(
  connection: ConnectionOptions,
  prefixOf: (queue: string) => string,
  outboundAttempts: number,
  partitions = 1,
  outboundPartitions = partitions,
): Queues {
  const open = <D>(name: string, defaultJobOptions: JobsOptions): Queue<D> => new Queue<D>(name, { connection, prefix: prefixOf(name), defaultJobOptions });
  const inbound = partitionList(partitions).map((k) =>
    open<InboundJob>(inboundQueueName(k), {
      // retried until Redis is back; other faults end it sooner (inbound-retry.ts)
      attempts: INBOUND_ATTEMPTS,
      backoff: { type: 'inbound' },
      removeOnComplete: { age: 3600, count: 5000 },
      removeOnFail: { age: 7 * 86400 },
    }),
  );
  const expiry = open<ExpiryJob>(QUEUE.expiry, {
    attempts: 5,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: true,
    removeOnFail: { age: 86400 },
  });
  const outbound = partitionList(outboundPartitions).map((k) =>
    open<OutboundJob>(outboundQueueName(k), {
      attempts: outboundAttempts,
      backoff: { type: 'outbound' },
      removeOnComplete: { age: 86400, count: 5000 },
      removeOnFail: { age: 7 * 86400 },
    }),
  );
  const all = (): Queue[] => [...inbound, expiry, ...outbound];
  return {
    inbound,
    inboundFor: (messageId) => inbound[partitionOf(messageId, inbound.length)]!,
    expiry,
    outbound,
    outboundFor: (jobId) => outbound[partitionOf(jobId, outbound.length)]!,
    all,
    close: async () => {
      await Promise.all(all().map((q) => q.close()));
    },
  };
}
