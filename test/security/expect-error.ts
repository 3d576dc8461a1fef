import { expect } from 'chai';
import type { JsonResponse } from '../helpers/http.js';

/** The error codes the README documents, with their statuses. */
export const DOCUMENTED_ERRORS: Record<string, number> = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_FAILED: 401,
  REFRESH_TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  LOGIN_DENIED: 403,
  PIN_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  PIN_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  NETWORK_ERROR: 503,
};

/** Traces of internals a response must never show: stack frames, file paths, library errors. */
const INTERNALS = /\bat [\w.<>]+ \(|node_modules|\/dist\/|\.[jt]s:\d+|SyntaxError|TypeError|RangeError|ReplyError|ERR_[A-Z_]+|Unexpected token/;

/**
 * Why an error response breaks the error body rules, or null when it follows them. A 5xx is
 * a problem unless the test took a backing service away (`unavailableExpected`).
 */
export function errorBodyProblem(status: number, body: unknown, text: string, unavailableExpected = false): string | null {
  if (status >= 500 && !(unavailableExpected && status === 503)) return `status ${status}`;
  if (typeof body !== 'object' || body === null) return 'body is not JSON';
  const b = body as Record<string, unknown>;
  if (b.success !== false) return 'success is not false';
  if (typeof b.error !== 'string' || DOCUMENTED_ERRORS[b.error] === undefined) return `undocumented code ${String(b.error)}`;
  if (DOCUMENTED_ERRORS[b.error] !== status) return `${b.error} with status ${status}`;
  if (typeof b.message !== 'string' || b.message === '') return 'no message';
  if (INTERNALS.test(text)) return 'internal detail in the response';
  return null;
}

/** Asserts a documented error response, with the given code when one is named. */
export function expectError(res: JsonResponse, code?: string): void {
  expect(errorBodyProblem(res.status, res.body, res.text, code === 'NETWORK_ERROR'), res.text).to.equal(null);
  if (code !== undefined) expect(res.body.error, res.text).to.equal(code);
}

export function expectRateLimited(res: JsonResponse): void {
  expectError(res, 'RATE_LIMITED');
  expect(res.status).to.equal(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${res.headers.get('retry-after')}`).to.equal(true);
}
