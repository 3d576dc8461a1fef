import { QUEUE } from './jobs.js';
import { partitionList, partitionOf } from '../messaging/partitions.js';

/**
 * The inbound path in N partitions (INBOUND_PARTITIONS): inbound queue k. On a Redis Cluster a
 * BullMQ queue's keys share one slot (its scripts need them together), so one queue would be one
 * shard's work however many shards run; N partitions spread them. A message's partition is a
 * hash of its id, so a gateway's redelivery lands in the same queue and the job id still makes
 * it one job. N = 1 (the default) keeps the single queue named `inbound`.
 *
 * The `outbound` queue splits the same way (OUTBOUND_PARTITIONS, by default as many as
 * INBOUND_PARTITIONS): a job goes to the queue of its job id's hash, so a repeated add under
 * the same id (a retried reply, an Idempotency-Key) finds the same queue and stays one job.
 * Which partition a message or job falls in is messaging's (src/messaging/partitions.ts).
 */

export { partitionList, partitionOf };

/** Queue `base` of partition k: `base`, then `base-1`, `base-2`, … (partition 0 keeps the old name). */
const partitionName = (base: string, partition: number): string => (partition === 0 ? base : `${base}-${partition}`);

/** `inbound`, `inbound-1`, … */
export const inboundQueueName = (partition: number): string => partitionName(QUEUE.inbound, partition);

/** `outbound`, `outbound-1`, … */
export const outboundQueueName = (partition: number): string => partitionName(QUEUE.outbound, partition);

/** Whether a queue name is one of the inbound partitions. */
export const isInbound = (queue: string): boolean => queue === QUEUE.inbound || queue.startsWith(`${QUEUE.inbound}-`);
