/**
 * The key schema, the same on one Redis and on a Redis Cluster: every key lives under
 * KEY_PREFIX (two deployments or test runs can share one Redis), and keys that one atomic step
 * changes together share a hash tag (the part between `{` and `}`, the only part a cluster
 * hashes to pick a slot; on one instance it is just text). Everything else gets a tag of its own
 * entity, so registrations, users, sessions and messages spread over every shard.
 *
 * Tags start with a letter naming the entity so that, say, a user id can never share a slot
 * with a PIN hash by accident of equal text. Which step touches which keys: docs/scaling.md,
 * "Cluster key schema".
 */
export interface Keys {
  prefix: string;
  /**
   * registration hash, by PIN hash; tag `r<pinHash>`. Fields: pinId, emojiHash (the string's
   * hash, '' for a decoy), expiresAt (ms), origin (device\nmasked ip), state, and as the login
   * goes on askedOf (the sender a chat question went to), messageId (the chat message that
   * claimed or denied it), userId, sessionId, refreshJti (the claim's), result (the LoginResult
   * JSON) and verifiedAt (ms). state: pending → awaiting (the chat question asked) → claimed (a
   * worker is issuing tokens) → verified (result stored) → collected (handed out, kept for a lost
   * answer's retry); or denied (NO in the chat, or the sender's account blocked: refusal
   * `blocked`), failed (the login job failed for good).
   */
  registration(pinHash: string): string;
  /**
   * a decoy answered to a keyed register-pin attempt (its pinId and expiry), so its repeat answers
   * as a retry would; tag `r<pinHash>`, the registration's (its step reads it)
   */
  attemptDecoy(pinHash: string, attemptTag: string): string;
  /** normalised emoji string → PIN hash of the active registration holding it; tag of its own */
  emoji(normalisedEmoji: string): string;
  /** sorted set: PIN hashes of one bucket scored by expiry (ms); the expiry sweep walks every bucket */
  active(bucket: number): string;
  /** the bucket a registration's entry in the active sets lives in */
  activeBucket(pinHash: string): number;
  /**
   * user hash; tag `u<id>`, shared with the user's session index, sessions and rotations. A
   * blocked account's also holds blockedAt (ms), blockedBy (actor text), blockReason (accounts/block.ts)
   */
  user(id: string): string;
  /** phone → user id; tag `p<phone>`, shared with the phone's chat confirmation */
  userByPhone(phone: string): string;
  /**
   * an identifier → the one account it is linked to (src/identity): a phone's is userByPhone
   * (accounts keyed by phone before identifiers kept their keys); any other kind `i<kind>:<value>`
   */
  identity(kind: string, value: string): string;
  /** hash: a session (userId, refreshJti, createdAt, lastUsedAt ms, origin); access tokens carry `sub` and `sid`, so the key is known without a lookup */
  session(userId: string, sid: string): string;
  /** sorted set: the user's session ids scored by session expiry (ms), for listing and sign-out-everywhere */
  userSessions(userId: string): string;
  /** hash: the chat questions this sender is asked, by number → {pinHash, expiresAt ms, origin, askedAt ms} (JSON) */
  confirmation(phone: string): string;
  /** hash: the last rotation of a session (jti replaced, pairJson answered), kept for the refresh retry leeway (rotate-session.lua) */
  rotation(userId: string, sid: string): string;
  /** a send-message Idempotency-Key of one user (key digested) */
  idempotency(userId: string, keyDigest: string): string;
  /** inbound message ids seen in the last 24 hours; tag `m<id>` */
  message(messageId: string): string;
  /** BullMQ prefix of one queue: a queue's keys must share a slot (BullMQ's scripts need it) */
  queuePrefix(queue: string): string;
  /** Socket.IO redis adapter / emitter channel */
  socketChannel(): string;
  /** rate limiter key prefix (rate-limiter-flexible's single-key limits) */
  rateLimit(name: string): string;
  /** a budget of an IP group (lib/budgets.lua); every budget of one group shares tag `g<group>` */
  groupBudget(name: string, group: string): string;
  /** a budget of one PIN: the registration's tag, so the script on the registration spends it */
  pinBudget(name: string, pinHash: string): string;
  /** hash: node name → that process's metrics snapshot (JSON) */
  metricsNodes(): string;
  /** the key the replica barrier writes before each WAIT (redis/replicas.ts) */
  replicaBarrier(): string;
  /** hash: channel → its health as the gateway reported it (messaging/health.ts) */
  channelHealth(): string;
  /** hash: delivery record of an outbound job (status, timestamps, gateway id, owner); delivery.lua */
  outbound(jobId: string): string;
  /** gateway message id on a channel → outbound job id; tag `g<channel>:<id>` */
  outboundByGateway(channel: string, gatewayId: string): string;
  /** statuses that arrived before the gateway id was recorded (same tag as outboundByGateway) */
  outboundEarly(channel: string, gatewayId: string): string;
  /** the sender of an inbound message that may yet be edited (phone, name), by message id digest */
  sender(messageId: string): string;
  /** the signing key generated at first start when JWT_KEYS is not set (private JWK) */
  generatedSigningKey(alg: string): string;
  /** /health's write probe of one node (expires by itself) */
  healthProbe(node: string): string;
  /** an OpenID provider record (Session, Grant, AccessToken, Interaction, …) by model name and id (src/oidc/adapter.ts) */
  oidc(model: string, id: string): string;
  /** list: the record keys issued under one OpenID grant (codes, tokens), revoked together */
  oidcGrantTokens(grantId: string): string;
  /** an OpenID session's uid → its id */
  oidcUid(uid: string): string;
  /** a device flow user code → its record id */
  oidcUserCode(code: string): string;
  /** sorted set: every OpenID record of one account (user id) scored by its expiry (ms), so a sign-out finds them all */
  oidcAccount(userId: string): string;
  /** hash: per OpenID grant of one account, when it last issued a code or token and from which browser */
  oidcLogins(userId: string): string;
  /** when the account last signed out everywhere (ms): grants and provider sessions from before are dead */
  oidcSignedOut(userId: string): string;
  /** the chat login of one OpenID interaction (its current emoji string and attempt) */
  oidcInteractionLogin(uid: string): string;
  /** /health's activePins figure, shared by every node until it expires */
  activePinsFigure(): string;
  /** stream: the audit trail (src/accounts/audit.ts), one key for the deployment; tag `a` */
  audit(): string;
  /**
   * sorted set: the audit stream ids of the events naming one person (as subject or actor), so
   * their events and their erasure never scan the stream; on the trail's slot (tag `a`), so an
   * event and its indexes are written in one script
   */
  auditOfUser(userId: string): string;
  /** hash: one API key (src/accounts/api-keys.ts): its name, scopes, secret's SHA-256, who made it, times; tag `k<id>` */
  apiKey(id: string): string;
  /** sorted set: every API key's id scored by its creation time (ms), for listing */
  apiKeys(): string;
  /**
   * the directory (src/accounts/directory.ts), one tag `{d}` for the deployment so one script
   * updates it whole: sorted set of user ids scored by creation time (ms)
   */
  directoryCreated(): string;
  /** the directory: sorted set (all scores 0) of `<folded name>\0<user id>`, for name-prefix search by lex range */
  directoryNames(): string;
  /** the directory: hash user id → the JSON array of its entries in directoryNames (so a rename or an erase finds them) */
  directoryEntries(): string;
  /** the directory: set once the accounts made before it were indexed (directory.ts, backfill) */
  directoryBackfilled(): string;
  /**
   * hash: an erase in progress (src/accounts/erase.ts): its receipt id, actor, the person's
   * identifiers and each holding's count once done; the user's tag, so a retry finds it; deleted
   * when the erase is finished
   */
  erasePlan(userId: string): string;
  /** sorted set: user ids of erases begun and not finished, scored by their start (ms); Eraser.resume() walks it */
  erasePending(): string;
  /** an erase's receipt (JSON, no personal data), kept for ERASURE_RECEIPT_DAYS; by receipt id */
  erasure(receiptId: string): string;
  /** set while a person's own export may not be asked again (accounts/export.ts); the user's tag */
  exportWait(userId: string): string;
  /** the account's pending DELETE in the chat: `<number>|<message id>` (accounts/chat-rights.ts); tag `u<id>`, the user's */
  eraseAsk(userId: string): string;
  /** the account a confirmed chat DELETE is erasing, by the confirming message, so its retry finishes it; tag `m<id>` */
  eraseByMessage(messageId: string): string;
}

/**
 * Buckets of the active set: one sorted set would be one hot slot on a cluster. 16 divides 64,
 * so the bucket taken from a base64url PIN hash's first character is uniform.
 */
export const ACTIVE_BUCKETS = 16;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export function keys(prefix: string): Keys {
  return {
    prefix,
    registration: (h) => `${prefix}:reg:{r${h}}`,
    attemptDecoy: (h, tag) => `${prefix}:decoy:{r${h}}:${tag}`,
    emoji: (e) => `${prefix}:emo:{e${e}}`,
    active: (b) => `${prefix}:active:{a${b}}`,
    activeBucket: (h) => Math.max(0, BASE64URL.indexOf(h.charAt(0))) % ACTIVE_BUCKETS,
    user: (id) => `${prefix}:user:{u${id}}`,
    userByPhone: (phone) => `${prefix}:phone:{p${phone}}`,
    identity: (kind, value) => (kind === 'phone' ? `${prefix}:phone:{p${value}}` : `${prefix}:ident:{i${kind}:${value}}`),
    session: (id, sid) => `${prefix}:sess:{u${id}}:${sid}`,
    userSessions: (id) => `${prefix}:usess:{u${id}}`,
    confirmation: (phone) => `${prefix}:confirm:{p${phone}}`,
    rotation: (id, sid) => `${prefix}:rot:{u${id}}:${sid}`,
    idempotency: (userId, keyDigest) => `${prefix}:idem:{u${userId}}:${keyDigest}`,
    message: (id) => `${prefix}:msg:{m${id}}`,
    queuePrefix: (queue) => `${prefix}:bull:{q${queue}}`,
    socketChannel: () => `${prefix}:socket.io`,
    rateLimit: (name) => `${prefix}:rl:${name}`,
    groupBudget: (name, group) => `${prefix}:rl:${name}:{g${group}}`,
    pinBudget: (name, h) => `${prefix}:rl:${name}:{r${h}}`,
    metricsNodes: () => `${prefix}:metrics:nodes`,
    replicaBarrier: () => `${prefix}:replica-barrier`,
    channelHealth: () => `${prefix}:channel-health`,
    outbound: (jobId) => `${prefix}:out:{o${jobId}}`,
    outboundByGateway: (channel, id) => `${prefix}:outgw:{g${channel}:${id}}`,
    outboundEarly: (channel, id) => `${prefix}:outst:{g${channel}:${id}}`,
    sender: (id) => `${prefix}:sender:${id}`,
    generatedSigningKey: (alg) => `${prefix}:jwt:generated:${alg}`,
    healthProbe: (node) => `${prefix}:health:${node}`,
    oidc: (model, id) => `${prefix}:oidc:${model}:${id}`,
    oidcGrantTokens: (grantId) => `${prefix}:oidc:grant:${grantId}`,
    oidcUid: (uid) => `${prefix}:oidc:uid:${uid}`,
    oidcUserCode: (code) => `${prefix}:oidc:usercode:${code}`,
    oidcAccount: (userId) => `${prefix}:oidc:account:${userId}`,
    oidcLogins: (userId) => `${prefix}:oidc:logins:${userId}`,
    oidcSignedOut: (userId) => `${prefix}:oidc:signedout:${userId}`,
    oidcInteractionLogin: (uid) => `${prefix}:oidc:login:${uid}`,
    activePinsFigure: () => `${prefix}:active-figure`,
    audit: () => `${prefix}:audit:{a}`,
    auditOfUser: (id) => `${prefix}:audit:{a}:u:${id}`,
    apiKey: (id) => `${prefix}:apikey:{k${id}}`,
    apiKeys: () => `${prefix}:apikeys`,
    directoryCreated: () => `${prefix}:dir:{d}:created`,
    directoryNames: () => `${prefix}:dir:{d}:names`,
    directoryEntries: () => `${prefix}:dir:{d}:entries`,
    directoryBackfilled: () => `${prefix}:dir:{d}:backfilled`,
    erasePlan: (id) => `${prefix}:erasing:{u${id}}`,
    erasePending: () => `${prefix}:erasing-pending`,
    erasure: (id) => `${prefix}:erasure:${id}`,
    exportWait: (id) => `${prefix}:export-wait:{u${id}}`,
    eraseAsk: (id) => `${prefix}:erase-ask:{u${id}}`,
    eraseByMessage: (id) => `${prefix}:erase-msg:{m${id}}`,
  };
}
