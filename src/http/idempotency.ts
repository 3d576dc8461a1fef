import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import { AppError } from '../errors.js';
import type { Keys } from '../redis/keys.js';

/**
 * `Idempotency-Key` for client writes (send-message): the same key with the same body gets the
 * same answer and does the work once; the same key with another body is 422
 * IDEMPOTENCY_KEY_REUSED. Keys are scoped per user and remembered for `ttlSeconds`.
 *
 * Redis holds `<body fingerprint>` from the first attempt on, and `<fingerprint>|done` once the
 * work is known to be in Redis. The work must itself be idempotent under `workId` (a BullMQ job
 * id: an add with a known id keeps the existing job), so an attempt whose answer was lost (503
 * after a timeout) is finished by its retry without doing the work twice; once `done`, the work
 * is not even attempted again (the job may be gone from the queue by then).
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

const digest = (s: string): string => createHash('sha256').update(s, 'utf8').digest('base64url');

export interface IdempotentRun {
  /** deterministic id of the work (same user + key → same id) */
  workId: string;
  /** true when this attempt is the first with this key (spend rate limits only then) */
  first: boolean;
  /** true when an earlier attempt is known to have finished the work */
  done: boolean;
  /** marks the work as done */
  finish(): Promise<void>;
  /** forgets the key (the first attempt was refused before doing anything) */
  forget(): Promise<void>;
}

export class IdempotencyKeys {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly ttlSeconds: number,
  ) {}

  /** Validates the header value: 1 to 255 printable ASCII characters. */
  static parse(header: string | undefined): string | undefined {
    if (header === undefined || header === '') return undefined;
    if (!KEY_FORMAT.test(header)) {
      throw new AppError('VALIDATION_ERROR', 'Idempotency-Key must be 1 to 255 printable ASCII characters', {
        details: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      });
    }
    return header;
  }

  async begin(userId: string, key: string, body: unknown): Promise<IdempotentRun> {
    const keyDigest = digest(`${userId}\n${key}`);
    const rk = this.keys.idempotency(userId, keyDigest);
    const fingerprint = digest(JSON.stringify(body));
    const created = await this.redis.set(rk, fingerprint, 'EX', this.ttlSeconds, 'NX');
    let done = false;
    if (created === null) {
      const stored = await this.redis.get(rk);
      // null: it expired between the two commands; carry on as a retry (the work id is the same)
      if (stored !== null && stored.split('|')[0] !== fingerprint) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED');
      }
      done = stored === `${fingerprint}|done`;
    }
    return {
      workId: `i${keyDigest.slice(0, 32)}`,
      first: created !== null,
      done,
      finish: async () => {
        await this.redis.set(rk, `${fingerprint}|done`, 'KEEPTTL');
      },
      forget: async () => {
        await this.redis.del(rk);
      },
    };
  }
}
