/**
 * An outbound messaging provider: sends one text to one phone. Failures say whether a retry can
 * help (timeouts, connection errors, 429, 5xx) and, for 429, how long the gateway asked us to wait.
 */
export interface MessagingProvider {
  readonly name: string;
  send(to: string, text: string): Promise<{ providerMessageId: string | null }>;
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs: number | undefined = undefined,
    readonly status: number | undefined = undefined,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** Parses Retry-After (seconds or an HTTP date) into ms. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * POSTs JSON and classifies the outcome; `describe` turns an error body into a reason.
 * Shared by the HTTP providers so retry rules live in one place.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
  describe: (status: number, body: unknown) => string,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const reason = err instanceof Error && err.name === 'TimeoutError' ? 'timeout' : 'connection error';
    throw new ProviderError(`gateway ${reason}: ${err instanceof Error ? err.message : String(err)}`, true);
  }
  const text = await res.text().catch(() => '');
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* keep text */
  }
  if (res.ok) return parsed;
  const reason = `gateway answered ${res.status}: ${describe(res.status, parsed)}`;
  if (res.status === 429) throw new ProviderError(reason, true, parseRetryAfter(res.headers.get('retry-after')), 429);
  if (res.status >= 500 || res.status === 408) throw new ProviderError(reason, true, undefined, res.status);
  throw new ProviderError(reason, false, undefined, res.status);
}
