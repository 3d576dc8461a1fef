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
  /** inbound message ids seen in the last 24 hours */
  message(messageId: string): string;
  /** stream of accepted webhook messages not yet on the `inbound` queue (intake.ts → intake-pump.ts) */
  inboundIntake(): string;
  /** the one intake pump's lock */
  intakePumpLock(): string;
  /** BullMQ prefix (queues then live at `<prefix>:bull:<name>:*`) */
  bull(): string;
  /** Socket.IO redis adapter / emitter channel */
  socketChannel(): string;
  /** rate limiter key prefix */
  rateLimit(name: string): string;
  /** hash: node name → that process's metrics snapshot (JSON) */
  metricsNodes(): string;
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
    message: (id) => `${prefix}:msg:${id}`,
    inboundIntake: () => `${prefix}:intake`,
    intakePumpLock: () => `${prefix}:intake:lock`,
    bull: () => `${prefix}:bull`,
    socketChannel: () => `${prefix}:socket.io`,
    rateLimit: (name) => `${prefix}:rl:${name}`,
    metricsNodes: () => `${prefix}:metrics:nodes`,
  };
}
