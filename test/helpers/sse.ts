/** One Server-Sent Events frame as read: its fields, or a comment line (`: …`). */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** A Server-Sent Events reader for tests: the answer's status and headers, then one frame at a time. */
export interface SseClient {
  status: number;
  headers: Headers;
  /** the body when the answer is not a stream (an error's JSON) */
  text?: string;
  /** the next frame, or null once the server ended the stream; rejects after timeoutMs */
  next(timeoutMs?: number): Promise<SseFrame | null>;
  /** the next frame carrying an event (comments skipped) */
  nextEvent(timeoutMs?: number): Promise<SseFrame | null>;
  close(): void;
}

export async function openSse(url: string, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<SseClient> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(url, { headers, signal: abort.signal });
  const isStream = res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const text = isStream ? undefined : await res.text();
  const reader = isStream ? res.body!.getReader() : undefined;
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = !isStream;

  const parse = (block: string): SseFrame => {
    const frame: SseFrame = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) frame.comment = line.slice(1).trim();
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const field = line.slice(0, colon) as 'id' | 'event' | 'data' | 'retry';
      const value = line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data' && frame.data !== undefined) frame.data += `\n${value}`;
      else frame[field] = value;
    }
    return frame;
  };
  const next = async (timeoutMs = 10_000): Promise<SseFrame | null> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return parse(block);
      }
      if (ended || !reader) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no Server-Sent Events frame within ${timeoutMs} ms`);
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk === 'timeout') throw new Error(`no Server-Sent Events frame within ${timeoutMs} ms`);
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    status: res.status,
    headers: res.headers,
    text,
    next,
    async nextEvent(timeoutMs = 10_000) {
      for (;;) {
        const f = await next(timeoutMs);
        if (f === null || f.event !== undefined || f.data !== undefined) return f;
      }
    },
    close() {
      abort.abort();
    },
  };
}
