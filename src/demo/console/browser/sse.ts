/**
 * Server-Sent Events read from a fetch body (EventSource can't send the bearer header), parsed
 * as the HTML standard's "event stream interpretation" says: lines end in CRLF, LF or CR; a
 * blank line dispatches the event; `data` lines join with LF; `id` sets the last event id (not
 * when it holds NUL); lines starting with `:` are comments (keep-alives); `retry` is the
 * reconnection time in ms.
 */
export interface SseEvent {
  /** `message` unless an `event` field names it */
  event: string;
  data: string;
  /** the last event id after this event (what `Last-Event-ID` sends on reconnect) */
  id: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private sawCr = false;
  lastEventId = '';
  retryMs: number | undefined;

  constructor(private readonly onEvent: (e: SseEvent) => void) {}

  /** Feeds decoded text; dispatches every event it completes. */
  push(chunk: string): void {
    let text = chunk;
    // a CR at the end of the last chunk already ended its line: an LF right after it is the same break
    if (this.sawCr && text.startsWith('\n')) text = text.slice(1);
    this.sawCr = text.endsWith('\r');
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
    }
  }

  private dispatch(): void {
    if (this.data.length === 0) {
      this.event = '';
      return;
    }
    const e: SseEvent = { event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId };
    this.data = [];
    this.event = '';
    this.onEvent(e);
  }
}

/** Reads a response body to its end (or the signal), handing each event to `onEvent`. */
export async function readEvents(body: ReadableStream<Uint8Array>, parser: SseParser, signal: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const stop = (): void => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        parser.push(decoder.decode());
        return;
      }
      parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
