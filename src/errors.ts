/**
 * The one error model: a code decides the HTTP status and the body shape
 * `{success: false, error: CODE, message, details?}`; sockets send the same code in `pin-error`.
 */

export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_FAILED: 401,
  REFRESH_TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  PIN_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PIN_CONFLICT: 409,
  PIN_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
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
  PIN_NOT_FOUND: 'The PIN does not exist',
  NOT_FOUND: 'Not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  PIN_CONFLICT: 'The PIN or emoji string is already held by another active registration',
  PIN_EXPIRED: 'The PIN has expired',
  PAYLOAD_TOO_LARGE: 'The request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported content type',
  RATE_LIMITED: 'Too many requests',
  INTERNAL_ERROR: 'Internal error',
  NETWORK_ERROR: 'A backing service is unreachable; the request was not accepted',
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
  /** seconds, for RATE_LIMITED */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message?: string, opts: { details?: unknown; retryAfter?: number; cause?: unknown } = {}) {
    super(message ?? DEFAULT_MESSAGES[code], { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { success: false, error: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    return body;
  }
}

/** Errors of ioredis / BullMQ that mean "Redis could not take this", answered 503. */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const msg = err.message;
  return (
    /Stream isn't writeable|enableOfflineQueue|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Reached the max retries|connect ETIMEDOUT|Command timed out|LOADING|MISCONF|OOM command not allowed|READONLY/.test(
      msg,
    ) || (err as { code?: string }).code === 'ECONNREFUSED'
  );
}

/** Normalises anything thrown into an AppError; unknown faults become INTERNAL_ERROR. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isRedisUnavailable(err)) return new AppError('NETWORK_ERROR', undefined, { cause: err });
  return new AppError('INTERNAL_ERROR', undefined, { cause: err });
}
