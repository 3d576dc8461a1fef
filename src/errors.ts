/**
 * The one error model: a code decides the HTTP status and the body shape
 * `{success: false, error: CODE, message, details?}`; sockets send the same code in `pin-error`.
 */

export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_FAILED: 401,
  REFRESH_TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  LOGIN_DENIED: 403,
  LOGIN_FAILED: 410,
  PIN_NOT_FOUND: 404,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PIN_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  NETWORK_ERROR: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'Invalid data',
  AUTHENTICATION_FAILED: 'Authentication failed',
  REFRESH_TOKEN_EXPIRED: 'The refresh token has expired',
  FORBIDDEN: 'Not allowed',
  LOGIN_DENIED: 'The person refused this sign-in in the chat',
  LOGIN_FAILED: 'The sign-in could not be completed; start again with a new registration',
  PIN_NOT_FOUND: 'The PIN does not exist',
  NOT_FOUND: 'Not found',
  SESSION_NOT_FOUND: 'No such session',
  MESSAGE_NOT_FOUND: 'No such message',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  PIN_EXPIRED: 'The PIN has expired',
  PAYLOAD_TOO_LARGE: 'The request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported content type',
  IDEMPOTENCY_KEY_REUSED: 'This Idempotency-Key was already used with a different request body',
  RATE_LIMITED: 'Too many requests',
  INTERNAL_ERROR: 'Internal error',
  NETWORK_ERROR: 'A backing service is unavailable; the request was not accepted, retry later',
};

export interface ErrorBody {
  success: false;
  error: ErrorCode;
  message: string;
  details?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** seconds, for RATE_LIMITED and NETWORK_ERROR (sent as Retry-After) */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message?: string, opts: { details?: unknown; retryAfter?: number; cause?: unknown } = {}) {
    super(message ?? DEFAULT_MESSAGES[code], { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    // a 503 always says when to come back
    this.retryAfter = opts.retryAfter ?? (code === 'NETWORK_ERROR' ? 1 : undefined);
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { success: false, error: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    return body;
  }
}

/**
 * Why Redis could not take a command, from the errors ioredis, BullMQ and rate-limiter-flexible
 * raise. `timeout` is the one case where the command may still have run (it was sent; the
 * answer was late): every write is built to be retried safely for that reason.
 */
export type RedisFault = 'unreachable' | 'timeout' | 'out-of-memory' | 'read-only' | 'loading' | 'persistence-failing' | 'busy';

/** A pattern matching any of the phrases, each taken literally. */
const anyOf = (...phrases: string[]): RegExp => new RegExp(phrases.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'));

const FAULT_PATTERNS: [RegExp, RedisFault][] = [
  [/Command timed out|Socket timeout/, 'timeout'],
  [/^OOM |OOM command not allowed/, 'out-of-memory'],
  // rate-limiter-flexible's MULTI: a command refused inside it (OOM) aborts the transaction
  [/EXECABORT|Transaction discarded/, 'out-of-memory'],
  [/READONLY|MASTERDOWN|NOREPLICAS/, 'read-only'],
  [/^LOADING|LOADING Redis is loading/, 'loading'],
  [/MISCONF/, 'persistence-failing'],
  // a cluster between primaries: a slot moving or its primary failing over
  [/^BUSY|TRYAGAIN|CLUSTERDOWN|Too many Cluster redirections|^MOVED |^ASK |max number of clients/, 'busy'],
  // the connection is gone, going, or never came (one server, Sentinel, cluster, TLS)
  [
    anyOf(
      "Stream isn't writeable",
      'enableOfflineQueue',
      'Connection is closed',
      'Connection is aborted',
      'Connection is discarded',
      'Command aborted due to connection close',
      'Connection ended before ready',
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
      'socket hang up',
      'secure TLS connection',
      'Reached the max retries',
      'Redis not ready',
      'All sentinels are unreachable',
      'Failed to refresh slots cache',
      'None of startup nodes',
      'No master node is available',
      'Cluster is disconnect',
      'No sharded subscriber',
      'No subscriber for the cluster',
    ),
    'unreachable',
  ],
];

/** Socket error codes of a connection that failed or broke (plain TCP or TLS). */
const UNREACHABLE_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ERR_SSL_|ERR_TLS_|ERR_SOCKET_)/;
/** ioredis' own classes for "gave up on this command" (their messages say the same, this is belt and braces) */
const UNREACHABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);

/**
 * The kind of Redis fault an error is, or null when it is something else: the one classification
 * of the service (HTTP answers, socket answers, /health, the workers' retries all ask it). Looks
 * through `cause`, an AggregateError's `errors` (Node's connect to several addresses) and a
 * cluster's `lastNodeError`, since a fault often arrives wrapped.
 */
export function redisFault(err: unknown, depth = 0): RedisFault | null {
  if (!(err instanceof Error) || depth > 4) return null;
  // our own 503 names the Redis fault behind it as its cause
  if (err instanceof AppError) return err.code === 'NETWORK_ERROR' ? redisFault(err.cause, depth + 1) : null;
  const msg = err.message;
  for (const [pattern, fault] of FAULT_PATTERNS) if (pattern.test(msg)) return fault;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNREACHABLE_CODES.test(code)) return 'unreachable';
  if (UNREACHABLE_NAMES.has(err.name)) return 'unreachable';
  const wrapped: unknown[] = [err.cause, (err as { lastNodeError?: unknown }).lastNodeError, ...(err instanceof AggregateError ? err.errors : [])];
  for (const inner of wrapped) {
    const fault = redisFault(inner, depth + 1);
    if (fault !== null) return fault;
  }
  return null;
}

/** Errors of ioredis / BullMQ that mean "Redis could not take this", answered 503. */
export function isRedisUnavailable(err: unknown): boolean {
  return redisFault(err) !== null;
}

/**
 * Retry-After of a 503, seconds: a dropped connection or a late answer is usually over within a
 * second; a full, read-only or loading Redis needs an operator or a failover, so clients wait longer.
 */
const FAULT_RETRY_AFTER: Record<RedisFault, number> = {
  unreachable: 1,
  timeout: 1,
  busy: 1,
  'out-of-memory': 5,
  'read-only': 5,
  loading: 5,
  'persistence-failing': 5,
};

/** Normalises anything thrown into an AppError; unknown faults become INTERNAL_ERROR. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const fault = redisFault(err);
  if (fault === 'timeout') {
    return new AppError('NETWORK_ERROR', 'The store answered too late; the request may have been applied, and retrying it is safe', {
      cause: err,
      retryAfter: FAULT_RETRY_AFTER.timeout,
    });
  }
  if (fault !== null) return new AppError('NETWORK_ERROR', undefined, { cause: err, retryAfter: FAULT_RETRY_AFTER[fault] });
  return new AppError('INTERNAL_ERROR', undefined, { cause: err });
}
