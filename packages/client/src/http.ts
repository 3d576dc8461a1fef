import { PinAuthError, type ServiceErrorCode } from './errors.js';

/** JSON over fetch; every non-2xx answer becomes a PinAuthError with the service's code. */
export class Http {
  constructor(
    private readonly baseUrl: string,
    private readonly fetchFn: typeof fetch,
  ) {}

  async request<T>(method: string, path: string, opts: { body?: unknown; token?: string; signal?: AbortSignal } = {}): Promise<T> {
    const headers: Record<string, string> = {};
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
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
