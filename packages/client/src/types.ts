/** What a login gives: the tokens and the person (same shape as check-login and auth-success). */
export interface User {
  id: string;
  name: string;
  /** E.164; absent when the person signed in by a WhatsApp LID or Cloud user id and never showed a phone */
  phone?: string;
  roles: string[];
}

export interface Session {
  token: string;
  refreshToken: string;
  user: User;
}

/** One of the person's open sessions (devices), as GET /sessions lists them. */
export interface SessionInfo {
  id: string;
  /** `app`: a session of this service's tokens; `oidc`: an app signed in through the OpenID provider (id `oidc.…`) */
  kind: 'app' | 'oidc';
  /** the app an OpenID login is for */
  client?: { id: string; name: string };
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  device: string;
  ip: string;
  /** the session of the token that asked */
  current: boolean;
}

export interface Profile extends User {
  surname: string;
}

/**
 * Where a login stands: `waiting` for the chat message, `awaiting-confirmation` (the person is
 * asked in the chat to confirm), then one end: `signed-in`, `expired`, `denied`, `failed`
 * (start again), `cancelled`.
 */
export type LoginStatus = 'waiting' | 'awaiting-confirmation' | 'signed-in' | 'expired' | 'denied' | 'failed' | 'cancelled';

export interface ClientOptions {
  /** the service's URL, e.g. `https://auth.example.com`; in a page served by the service, `location.origin` */
  baseUrl: string;
  /** the service's WhatsApp number (`+15551234567`) for the wa.me link until register-pin names one (the service then says which of its numbers is healthy) */
  whatsappNumber?: string;
  /** `auto` (default): socket first, polling while it is not connected; `polling`: HTTP only */
  transport?: 'auto' | 'polling';
  /** how often check-login is polled without a socket (default 1000 ms; the service allows about one a second per PIN) */
  pollIntervalMs?: number;
  /** how long to wait for the first socket connection before polling (default 3000 ms) */
  connectTimeoutMs?: number;
  /**
   * how often check-login is polled while the socket is connected, for a result the socket
   * missed (its node was cut off from Redis when it was published); default 15000 ms, 0: never
   */
  recheckIntervalMs?: number;
  /**
   * how long a registration (and a logout) is sent again after a 503, a 429, an unreachable
   * service or a lost answer, honouring Retry-After (default 30000 ms; refreshes: 6 s at most)
   */
  retryForMs?: number;
  /** a fetch to use instead of the global one (tests, instrumentation) */
  fetch?: typeof fetch;
}

export interface StartOptions {
  /**
   * the emoji string to show; default: none is sent and the service draws one (services with
   * EMOJI_CHOICE=server, the production default, refuse a client's string)
   */
  emojiString?: string;
  /** the secret PIN; default: 128 random bits. Whoever knows it collects the tokens. */
  pin?: string;
}

/**
 * Everything the service holds about the person (GET /account/export): each kind of data under
 * its name (`account`, `identifiers`, `sessions`, `openid`, `registrations`, `events`, …). The
 * service's docs/accounts.md, "Export", describes each part.
 */
export interface AccountExport {
  format: string;
  /** ISO 8601 */
  exportedAt: string;
  userId: string;
  holdings: {
    account: { id: string; roles: string[]; [field: string]: unknown };
    identifiers: { kind: string; value: string; linked: boolean }[];
    sessions: Omit<SessionInfo, 'current'>[];
    openid: SessionInfo[];
    events: unknown[];
    [holding: string]: unknown;
  };
}

/** What an erase leaves (DELETE /account): no personal data; keep the id as proof of the erasure. */
export interface ErasureReceipt {
  /** `er_…`: the receipt the service keeps (for a year by default) */
  id: string;
  /** ISO 8601 */
  erasedAt: string;
  /** `user` when the person asked themselves */
  actor: string;
  /** keys removed, by kind of data */
  removed: Record<string, number>;
}
