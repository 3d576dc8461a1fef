/**
 * The key schema for Redis Cluster (design, ready for the scripts' port; the running service
 * still uses keys.ts). A cluster hashes only the part of a key between the first `{` and `}`
 * (the hash tag) to pick its slot, and a script or MULTI may only touch keys of one slot. So:
 *
 * - keys that one atomic step must change together share a tag;
 * - everything else gets a tag of its own entity, so registrations, users and sessions spread
 *   over every shard instead of all sitting behind one tag;
 * - a login, which spans a message, an emoji string, a registration, a phone, a user and a
 *   session, runs as a chain of one-slot steps, each idempotent (keyed on the message id and
 *   the job's nonce), so a crash between two steps leaves nothing a retry cannot finish.
 *   The chain and what each step may leave behind: docs/scaling.md, "Cluster key schema".
 *
 * Tags start with a letter naming the entity so that, say, a user id can never collide with
 * a PIN hash in the same slot by accident of equal text.
 */
export interface ClusterKeys {
  /** registration hash; tag = the PIN hash (register, check, cancel, claim and complete touch only it) */
  registration(pinHash: string): string;
  /** emoji string → PIN hash holding it; its own tag (a first, idempotent step of register and of a login) */
  emoji(emojiHash: string): string;
  /** expiry sweep buckets: registrations spread over `buckets` sorted sets, each swept on its own */
  active(bucket: number): string;
  /** phone → user id, and the pending chat confirmation of that phone: one tag per phone */
  userByPhone(phone: string): string;
  confirmation(phone: string): string;
  /** user, the user's session index and the sessions: one tag per user (sign out everywhere is one step) */
  user(userId: string): string;
  userSessions(userId: string): string;
  /** a session; the access token carries `sub` and `sid`, so the key is known without a lookup */
  session(userId: string, sid: string): string;
  /** de-duplication of a gateway message id: its own tag */
  message(messageId: string): string;
  /** intake stream partition k (one slot each; one pump per partition) and its pump lock */
  intake(partition: number): string;
  intakeLock(partition: number): string;
  /** BullMQ prefix of one queue: each queue's keys share a slot (BullMQ's scripts need it) */
  queuePrefix(queue: string): string;
}

export function clusterKeys(prefix: string): ClusterKeys {
  return {
    registration: (h) => `${prefix}:reg:{r${h}}`,
    emoji: (e) => `${prefix}:emo:{e${e}}`,
    active: (b) => `${prefix}:active:{a${b}}`,
    userByPhone: (phone) => `${prefix}:phone:{p${phone}}`,
    confirmation: (phone) => `${prefix}:confirm:{p${phone}}`,
    user: (id) => `${prefix}:user:{u${id}}`,
    userSessions: (id) => `${prefix}:usess:{u${id}}`,
    session: (id, sid) => `${prefix}:sess:{u${id}}:${sid}`,
    message: (id) => `${prefix}:msg:{m${id}}`,
    intake: (k) => `${prefix}:intake:{i${k}}`,
    intakeLock: (k) => `${prefix}:intake:{i${k}}:lock`,
    queuePrefix: (queue) => `${prefix}:bull:{q${queue}}`,
  };
}
