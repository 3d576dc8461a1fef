/**
 * The service's error codes (README "Errors"), plus the client's own: CANCELLED (cancel() was
 * called), CONNECTION_FAILED (the service could not be reached at all).
 */
export const SERVICE_ERROR_CODES = [
  'VALIDATION_ERROR',
  'AUTHENTICATION_FAILED',
  'REFRESH_TOKEN_EXPIRED',
  'FORBIDDEN',
  'LOGIN_DENIED',
  'PIN_NOT_FOUND',
  'NOT_FOUND',
  'SESSION_NOT_FOUND',
  'MESSAGE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'PIN_EXPIRED',
  'LOGIN_FAILED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'IDEMPOTENCY_KEY_REUSED',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'NETWORK_ERROR',
] as const;

export type ServiceErrorCode = (typeof SERVICE_ERROR_CODES)[number];

export type PinAuthErrorCode = ServiceErrorCode | 'CANCELLED' | 'CONNECTION_FAILED';

/** Every failure of the client: `code` says what happened, `status` the HTTP status when there was one. */
export class PinAuthError extends Error {
  readonly code: PinAuthErrorCode;
  readonly status: number | undefined;
  /** seconds to wait (RATE_LIMITED, NETWORK_ERROR) */
  readonly retryAfter: number | undefined;
  /** VALIDATION_ERROR: which fields and why */
  readonly details: unknown;

  constructor(code: PinAuthErrorCode, message: string, opts: { status?: number; retryAfter?: number; details?: unknown } = {}) {
    super(message);
    this.name = 'PinAuthError';
    this.code = code;
    this.status = opts.status;
    this.retryAfter = opts.retryAfter;
    this.details = opts.details;
  }
}

/** Codes after which polling or waiting again can still succeed. */
export const isTransient = (code: PinAuthErrorCode): boolean =>
  code === 'RATE_LIMITED' || code === 'NETWORK_ERROR' || code === 'CONNECTION_FAILED' || code === 'INTERNAL_ERROR';
