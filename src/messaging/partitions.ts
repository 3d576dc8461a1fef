/**
 * Which of N partitions a message (or an outbound job) falls in: the queue it goes to
 * (src/queues/partitions.ts names them). A hash of the id, so a redelivery lands
 * where the first delivery did.
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

/** 0 … n-1 */
export const partitionList = (partitions: number): number[] => Array.from({ length: Math.max(1, partitions) }, (_, k) => k);
