import { DelayedError, type Job } from 'bullmq';
import type { AuditTrail } from '../../accounts/audit.js';
import { decodeOrigin } from '../../registrations/origin.js';
import type { Logger } from '../../observability/logger.js';
import type { Notifier } from '../../realtime/notifier.js';
import { ACTIVE_BUCKETS, type Keys } from '../../redis/keys.js';
import type { Scripts } from '../../redis/scripts.js';
import type { ExpiryJob } from '../jobs.js';

/** What the sweeps use of the process's services (services.ts's bag has it). */
export interface ExpiryServices {
  keys: Keys;
  scripts: Scripts;
  log: Logger;
  /** each expiry is a `login.expired` event (docs/accounts.md) */
  audit: AuditTrail;
}

/** Members examined per script call: keeps each call short while a large backlog drains. */
const SWEEP_BATCH = 500;

/**
 * The delayed `expiry` processor: one job per expiry second sweeps every registration that is
 * due (not only its second's: a backlog left while no worker ran goes too). Redis TTLs already
 * ended them at their time; this tidies the active set and tells the registering sockets.
 */
/** Sweeps what is due up to `untilMs` (Redis' clock); returns how many expired and how long until `untilMs`. */
async function sweepDue(services: ExpiryServices, notifier: Notifier, untilMs: number, onExpired?: () => void): Promise<{ expired: number; waitMs: number }> {
  const { keys, scripts } = services;
  let expired = 0;
  let waitMs = 0;
  // the active set is split into buckets (one slot each on a cluster): each is swept on its own
  for (let bucket = 0; bucket < ACTIVE_BUCKETS; bucket++) {
    for (let more = true; more; ) {
      const swept = await sweepBucket(scripts, keys, bucket, untilMs, SWEEP_BATCH);
      for (const [pinHash, pinId] of swept.expired) {
        notifier.pinExpired(pinHash, pinId);
        onExpired?.();
      }
      // nobody signed in, nobody known: the registering device's masked network and kind
      await Promise.all(
        swept.expired.map(([, pinId, raw]) => {
          const origin = decodeOrigin(raw);
          return services.audit.note({ type: 'login.expired', ipGroup: origin.ip, detail: { pinId, device: origin.device } });
        }),
      );
      expired += swept.expired.length;
      waitMs = Math.max(waitMs, swept.waitMs);
      more = swept.more;
    }
  }
  return { expired, waitMs };
}

/**
 * One sweep of one bucket, at most `limit` due registrations: which are due (active-due), their
 * registrations read (reg-peek, each on its own slot), then settled in the bucket
 * (active-settle), which returns those that expired waiting, each to one sweeper only. The
 * reads go out at once (they are independent) and the bucket is settled after them. A sweep
 * that dies midway changed nothing: the next one does it all.
 */
export async function sweepBucket(
  scripts: Scripts,
  keys: Keys,
  bucket: number,
  untilMs: number,
  limit: number,
): Promise<{ waitMs: number; more: boolean; expired: [pinHash: string, pinId: string, origin: string][] }> {
  const active = keys.active(bucket);
  const { waitMs, more, due } = await scripts.run('active-due', [active], [untilMs, limit]);
  const out = { waitMs, more, expired: [] as [string, string, string][] };
  if (due.length === 0) return out;
  // the registrations are on their own slots and independent: read at once
  const read = await Promise.all(due.map((h) => scripts.run('reg-peek', [keys.registration(h)])));
  const settled = await scripts.run(
    'active-settle',
    [active],
    read.flatMap((r, i) => [due[i]!, r.pinId, r.state, r.expiresAt]),
  );
  const origins = new Map(due.map((h, i) => [h, read[i]!.origin]));
  for (const e of settled) out.expired.push([e.pinHash, e.pinId, origins.get(e.pinHash) ?? '']);
  return out;
}

export function expiryProcessor(services: ExpiryServices, notifier: Notifier, onExpired?: () => void) {
  const { log } = services;
  return async (job: Job<ExpiryJob>, token?: string): Promise<string> => {
    const { expired, waitMs } = await sweepDue(services, notifier, (job.data.second + 1) * 1000, onExpired);
    if (expired > 0) log.info('pins expired', { count: expired });
    if (waitMs > 0) {
      // fired before its second ended by Redis' clock: sweep the rest of that second later
      await job.moveToDelayed(Date.now() + waitMs + 5, token);
      throw new DelayedError();
    }
    return `expired ${expired}`;
  };
}

/**
 * A safety net beside the per-second jobs: every worker sweeps what is due now and then, so
 * expiries whose second's job was lost (removed by an operator, failed for good) are still
 * announced. Sweeps are atomic, so several workers doing it announce each PIN once.
 */
export function startSafetySweep(services: ExpiryServices, notifier: Notifier, everyMs: number, onExpired?: () => void): () => void {
  const timer = setInterval(() => {
    sweepDue(services, notifier, 0, onExpired).catch((err: unknown) =>
      services.log.warn('safety sweep failed', { error: err instanceof Error ? err.message : String(err) }),
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
