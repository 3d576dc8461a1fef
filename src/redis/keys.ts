/**
 * The key schema: every key and queue name lives under KEY_PREFIX, so two deployments or test
 * runs can share one Redis. Lua scripts build the same keys from the prefix they are given.
 */
export interface Keys {
  prefix: string;
  /** registration hash, by PIN hash */
  registration(pinHash: string): string;
  /** normalised emoji string → PIN hash of the active registration holding it */
  emoji(normalisedEmoji: string): string;
  /** sorted set: PIN hash scored by expiry (ms); active count without SCAN */
  active(): string;
  user(id: string): string;
  userByPhone(phone: string): string;
  session(sid: string): string;
  /** sorted set: the user's session ids scored by session expiry (ms), for listing and sign-out-everywhere */
  userSessions(userId: string): string;
  /** string: PIN hash of the registration whose chat confirmation this phone is asked for */
  confirmation(phone: string): string;
  /** the last rotation of a session, kept for the refresh retry leeway (rotate-session.lua) */
  rotation(sid: string): string;
  /** a send-message Idempotency-Key of one user (key digested) */
  idempotency(userId: string, keyDigest: string): string;
  /** inbound message ids seen in the last 24 hours */
  message(messageId: string): string;
  /** stream of accepted webhook messages not yet on their inbound queue (intake.ts → intake-pump.ts), per partition */
  inboundIntake(partition?: number): string;
  /** the lock of partition k's pump (one pump per partition works at a time) */
  intakePumpLock(partition?: number): string;
  /** BullMQ prefix (queues then live at `<prefix>:bull:<name>:*`) */
  bull(): string;
  /** Socket.IO redis adapter / emitter channel */
  socketChannel(): string;
  /** rate limiter key prefix */
  rateLimit(name: string): string;
  /** hash: node name → that process's metrics snapshot (JSON) */
  metricsNodes(): string;
  /** the key the replica barrier writes before each WAIT (redis/replicas.ts) */
  replicaBarrier(): string;
  /** hash: delivery record of an outbound job (status, timestamps, gateway id, owner); delivery.lua */
  outbound(jobId: string): string;
  /** the sender of an inbound message that may yet be edited (phone, name), by message id digest */
  sender(messageId: string): string;
  /** the signing key generated at first start when JWT_KEYS is not set (private JWK) */
  generatedSigningKey(alg: string): string;
  /** /health's write probe of one node (expires by itself) */
  healthProbe(node: string): string;
}

export function keys(prefix: string): Keys {
  return {
    prefix,
    registration: (h) => `${prefix}:reg:${h}`,
    emoji: (e) => `${prefix}:emo:${e}`,
    active: () => `${prefix}:active`,
    user: (id) => `${prefix}:user:${id}`,
    userByPhone: (phone) => `${prefix}:phone:${phone}`,
    session: (sid) => `${prefix}:sess:${sid}`,
    userSessions: (id) => `${prefix}:usess:${id}`,
    confirmation: (phone) => `${prefix}:confirm:${phone}`,
    rotation: (sid) => `${prefix}:rot:${sid}`,
    idempotency: (userId, keyDigest) => `${prefix}:idem:${userId}:${keyDigest}`,
    message: (id) => `${prefix}:msg:${id}`,
    // the cluster schema's names (cluster-keys.ts): each partition in a slot of its own
    inboundIntake: (k = 0) => `${prefix}:intake:{i${k}}`,
    intakePumpLock: (k = 0) => `${prefix}:intake:{i${k}}:lock`,
    bull: () => `${prefix}:bull`,
    socketChannel: () => `${prefix}:socket.io`,
    rateLimit: (name) => `${prefix}:rl:${name}`,
    metricsNodes: () => `${prefix}:metrics:nodes`,
    replicaBarrier: () => `${prefix}:replica-barrier`,
    outbound: (jobId) => `${prefix}:out:${jobId}`,
    sender: (id) => `${prefix}:sender:${id}`,
    generatedSigningKey: (alg) => `${prefix}:jwt:generated:${alg}`,
    healthProbe: (node) => `${prefix}:health:${node}`,
  };
}
