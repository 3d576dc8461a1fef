import { QUEUE } from './jobs.js';

/**
 * The inbound path in N partitions (INBOUND_PARTITIONS): intake stream k, its pump, and inbound
 * queue k. On a Redis Cluster one key lives in one slot, so one stream and one BullMQ queue (whose
 * scripts need all its keys in one slot) would be one shard's work however many shards run; N
 * partitions spread them. A message's partition is a hash of its id, so a gateway's redelivery
 * lands in the same stream and queue and the job id still makes it one job.
 * N = 1 (the default) keeps the single stream and the queue named `inbound`.
 *
 * The `outbound` queue splits the same way (OUTBOUND_PARTITIONS, by default as many as
 * INBOUND_PARTITIONS): a job goes to the queue of its job id's hash, so a repeated add under
 * the same id (a retried reply, an Idempotency-Key) finds the same queue and stays one job.
 */

/** FNV-1a over the UTF-16 units of the id: cheap, stable across processes and releases. */
export function partitionOf(messageId: string, partitions: number): number {
  if (partitions <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < messageId.length; i++) {
    h ^= messageId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

/** Queue `base` of partition k: `base`, then `base-1`, `base-2`, … (partition 0 keeps the old name). */
const partitionName = (base: string, partition: number): string => (partition === 0 ? base : `${base}-${partition}`);

/** `inbound`, `inbound-1`, … */
export const inboundQueueName = (partition: number): string => partitionName(QUEUE.inbound, partition);

/** `outbound`, `outbound-1`, … */
export const outboundQueueName = (partition: number): string => partitionName(QUEUE.outbound, partition);

/** Whether a queue name is one of the inbound partitions. */
export const isInbound = (queue: string): boolean => queue === QUEUE.inbound || queue.startsWith(`${QUEUE.inbound}-`);

/** 0 … n-1 */
export const partitionList = (partitions: number): number[] => Array.from({ length: Math.max(1, partitions) }, (_, k) => k);
