/** A small JSON client for tests: real HTTP against the service on loopback. */
export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function request<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  opts: { json?: unknown; raw?: string | Buffer; headers?: Record<string, string>; token?: string } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | Blob | undefined;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  } else if (opts.raw !== undefined) {
    body = typeof opts.raw === 'string' ? opts.raw : new Blob([new Uint8Array(opts.raw)]);
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(base + path, { method, headers, body, signal: AbortSignal.timeout(15000) }).catch((err: unknown) => {
    // fetch's own message is only "fetch failed": say which request and why (ECONNREFUSED, a socket closed, EMFILE…)
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${(err.cause as NodeJS.ErrnoException).code ?? ''} ${err.cause.message})` : '';
    throw new Error(`${method} ${base}${path}: ${err instanceof Error ? err.message : String(err)}${cause}`, { cause: err });
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export const post = <T = Record<string, unknown>>(base: string, path: string, json: unknown, token?: string) => request<T>(base, 'POST', path, { json, token });
export const get = <T = Record<string, unknown>>(base: string, path: string, token?: string) => request<T>(base, 'GET', path, { token });

/** Polls until `fn` returns a value that is not undefined, or fails after timeoutMs. */
export async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 10000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * `/health`'s activePins. /health gives itself a second and answers 503 `unavailable` (figure
 * null) past it, which a machine loaded by another suite can cause: such an answer is asked again.
 */
export function activePinsAt(base: string, timeoutMs = 10000): Promise<number> {
  return eventually(async () => {
    const h = await get<{ activePins: number | null }>(base, '/health');
    return h.status === 200 && typeof h.body.activePins === 'number' ? h.body.activePins : undefined;
  }, timeoutMs);
}

/**
 * Sends again while the answer is 503, at most `attempts` times: the documented answer when Redis
 * is slower than its command timeout (two suites on two cores can do that), which gateways and
 * clients retry. For tests whose subject is another answer.
 */
export async function againWhileUnavailable<T extends { status: number }>(send: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const r = await send();
    if (r.status !== 503 || attempt === attempts) return r;
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}
