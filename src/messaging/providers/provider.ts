import type { ChatButton } from '../../chat/message.js';

/**
 * An outbound messaging provider: sends one text to one phone. Failures say whether a retry can
 * help (timeouts, connection errors, 429, 5xx, and whatever a provider knows to be transient)
 * and how long the gateway asked us to wait (Retry-After).
 */
export interface MessagingProvider {
  readonly name: string;
  /**
   * `marker`: the outbound job's id, sent along where the gateway carries such a value back
   * (Cloud API: `biz_opaque_callback_data`, echoed in its status webhooks). No gateway takes an
   * idempotency key for sends: the marker identifies a message, it does not de-duplicate it.
   * `buttons`: reply buttons under the text where the gateway has them (Cloud API); a gateway
   * without them sends the text alone, which says what to type.
   */
  send(to: string, text: string, opts?: { marker?: string; buttons?: ChatButton[] }): Promise<{ providerMessageId: string | null }>;
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs: number | undefined = undefined,
    readonly status: number | undefined = undefined,
    /** the gateway said the sending number itself is restricted or banned (messaging/health.ts) */
    readonly unhealthy = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** What a provider makes of an error answer: a reason, and (when it knows better than the status) retryability. */
export interface FailureDescription {
  reason: string;
  retryable?: boolean;
  /** the error means the sending number is restricted or banned */
  unhealthy?: boolean;
}

/** Parses Retry-After (seconds or an HTTP date) into ms. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const retryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * POSTs JSON and classifies the outcome; `describe` turns an error answer into a reason.
 * Shared by the HTTP providers so retry rules live in one place. Redirects are not followed: a
 * POST turned into a GET would "succeed" without sending anything.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
  describe: (status: number, body: unknown) => FailureDescription,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const reason = err instanceof Error && err.name === 'TimeoutError' ? 'timeout' : 'connection error';
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    throw new ProviderError(`gateway ${reason}: ${cause}`, true);
  }
  let text = '';
  try {
    text = await res.text();
  } catch {
    // the answer started but did not finish (timeout, reset): it may or may not have been sent
    if (res.ok) return null;
  }
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* keep text */
  }
  if (res.ok) return parsed;
  const { reason, retryable = retryableStatus(res.status), unhealthy = false } = describe(res.status, parsed);
  const retryAfter = retryable ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
  throw new ProviderError(`gateway answered ${res.status}: ${reason}`, retryable, retryAfter, res.status, unhealthy);
}

/** A body's text for a reason when the provider has nothing better: short, one line. */
export function bodySnippet(body: unknown): string {
  const s = typeof body === 'string' ? body : JSON.stringify(body ?? null);
  return s.replace(/\s+/g, ' ').slice(0, 300);
}
