import { PinAuthError, type ServiceErrorCode } from './errors.js';

/** JSON over fetch; every non-2xx answer becomes a PinAuthError with the service's code. */
export class Http {
  constructor(
    private readonly baseUrl: string,
    private readonly fetchFn: typeof fetch,
  ) {}

  async request<T>(method: string, path: string, opts: { body?: unknown; token?: string; signal?: AbortSignal; idempotencyKey?: string } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
    let res: Response;
    try {
      res = await this.fetchFn(this.baseUrl + path, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: opts.signal,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw new PinAuthError('CANCELLED', 'Cancelled');
      throw new PinAuthError('CONNECTION_FAILED', `Could not reach ${this.baseUrl}: ${String(err)}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (res.ok) return body as T;
    const retry = Number(res.headers.get('retry-after'));
    const e = (body ?? {}) as { error?: string; message?: string; details?: unknown };
    const code = (typeof e.error === 'string' ? e.error : res.status >= 500 ? 'INTERNAL_ERROR' : 'NOT_FOUND') as ServiceErrorCode;
    throw new PinAuthError(code, e.message ?? `HTTP ${res.status}`, {
      status: res.status,
      retryAfter: Number.isFinite(retry) && retry >= 0 && res.headers.has('retry-after') ? retry : undefined,
      details: e.details,
    });
  }
}

/** Answers after which the same request may be sent again: the service was unreachable, busy or its answer was lost. */
export const isRetryable = (err: unknown): err is PinAuthError =>
  err instanceof PinAuthError &&
  (err.code === 'NETWORK_ERROR' || err.code === 'CONNECTION_FAILED' || err.code === 'RATE_LIMITED' || err.code === 'INTERNAL_ERROR');

/**
 * Runs `attempt` again after a retryable failure (isRetryable) until it succeeds, fails
 * otherwise, or `forMs` has passed since the first try: each wait is the answer's Retry-After,
 * else a backoff from 250 ms doubling up to 4 s. Only for requests the service makes safe to
 * repeat (docs/client.md, "Retries").
 */
export async function withRetries<T>(attempt: () => Promise<T>, forMs: number, signal?: AbortSignal): Promise<T> {
  const until = Date.now() + forMs;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isRetryable(err) || signal?.aborted) throw err;
      const wait = err.retryAfter !== undefined ? err.retryAfter * 1000 : Math.min(4000, 250 * 2 ** n);
      if (Date.now() + wait > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
