import { UnrecoverableError } from 'bullmq';
import { redisFault } from '../errors.js';

/**
 * How a chat message's job retries. An accepted webhook must end in one login or one reply
 * however long Redis is away, so a Redis fault (full, read-only, loading, gone, a failover,
 * a replica barrier not met: errors.ts `redisFault`) never uses up the job: it is tried again,
 * the wait doubling from FIRST_DELAY_MS up to INBOUND_RETRY_MAX_MS, until Redis is back. Any
 * other fault (a bug, a corrupt record) ends the job once it has been attempted
 * OTHER_FAULT_ATTEMPTS times: it then fails for good, is counted
 * (`pinauth_inbound_failed_total`), logged, listed on the dashboard, and `npm run replay-inbound`
 * puts it back once the cause is fixed (docs/operations.md).
 *
 * BullMQ's own API only: `attempts` high enough never to end a job by itself, a custom
 * backoff strategy for the wait, and UnrecoverableError to end it.
 */
export const INBOUND_ATTEMPTS = 1_000_000;
export const OTHER_FAULT_ATTEMPTS = 10;
const FIRST_DELAY_MS = 200;

/** Milliseconds before attempt `attemptsMade + 1`: doubling, capped, with ±20 % jitter so a backlog does not retry in step. */
export function inboundBackoff(attemptsMade: number, maxMs: number): number {
  const base = Math.min(maxMs, FIRST_DELAY_MS * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/**
 * What an attempt that threw becomes: the same error (retried) while Redis is at fault or the
 * job has attempts left for other faults; an UnrecoverableError (failed for good) otherwise.
 */
export function retryOrGiveUp(err: unknown, attemptsMade: number): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  if (error instanceof UnrecoverableError || redisFault(error) !== null) return error;
  if (attemptsMade + 1 < OTHER_FAULT_ATTEMPTS) return error;
  return new UnrecoverableError(`gave up after ${attemptsMade + 1} attempts: ${error.message}`);
}

/**
 * A failure the worker's `failed` event reports that ends the job: an UnrecoverableError (given up
 * above, or BullMQ's own for a job stalled past maxStalledCount) or its attempts used up.
 */
export function failedForGood(err: Error, attemptsMade: number, attempts: number | undefined): boolean {
  return err instanceof UnrecoverableError || attemptsMade >= (attempts ?? 1);
}
