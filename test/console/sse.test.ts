import { expect } from 'chai';
import { readEvents, type SseEvent, SseParser } from '../../src/demo/console/browser/sse.js';

/** Feeds `chunks` one by one and returns what was dispatched. */
function parse(chunks: string[]): { events: SseEvent[]; parser: SseParser } {
  const events: SseEvent[] = [];
  const parser = new SseParser((e) => events.push(e));
  for (const c of chunks) parser.push(c);
  return { events, parser };
}

describe("console: the live events' Server-Sent Events parser (the console reads the stream with fetch)", function () {
  it('dispatches at a blank line: id, event, data; comments and heartbeats are skipped; retry is kept', function () {
    const { events, parser } = parse([
      'retry: 5000\n: connected\n\n',
      'id: 1764622800000-0\nevent: audit\ndata: {"type":"login.succeeded"}\n\n',
      ': heartbeat\n\n',
    ]);
    expect(events).to.deep.equal([{ event: 'audit', data: '{"type":"login.succeeded"}', id: '1764622800000-0' }]);
    expect(parser.retryMs).to.equal(5000);
    expect(parser.lastEventId).to.equal('1764622800000-0');
  });

  it('joins an event cut anywhere, a CRLF split between chunks included, and multi-line data', function () {
    const whole = 'id: 7-0\r\ndata: a\r\ndata: b\r\n\r\nid: 8-0\rdata: c\r\r';
    for (let cut = 1; cut < whole.length; cut++) {
      const { events } = parse([whole.slice(0, cut), whole.slice(cut)]);
      expect(events, `cut at ${cut}`).to.deep.equal([
        { event: 'message', data: 'a\nb', id: '7-0' },
        { event: 'message', data: 'c', id: '8-0' },
      ]);
    }
  });

  it('keeps the last id across events, ignores an id holding NUL, an event without data and unknown fields', function () {
    const { events, parser } = parse(['id: 1-0\ndata: x\n\n', 'id: bad\u0000id\nfoo: bar\nevent: lonely\n\n', 'data\n\n', 'retry: soon\n\n']);
    expect(events).to.deep.equal([
      { event: 'message', data: 'x', id: '1-0' },
      { event: 'message', data: '', id: '1-0' },
    ]);
    expect(parser.lastEventId).to.equal('1-0');
    expect(parser.retryMs).to.equal(undefined);
  });

  it('reads a byte stream to its end, a character split between chunks included, and stops when aborted', async function () {
    const bytes = new TextEncoder().encode('data: olá 🐱\n\n');
    const split = bytes.indexOf(0xf0) + 2; // inside the emoji's four bytes
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, split));
        c.enqueue(bytes.slice(split));
        c.close();
      },
    });
    const got: string[] = [];
    await readEvents(body, new SseParser((e) => got.push(e.data)), new AbortController().signal);
    expect(got).to.deep.equal(['olá 🐱']);

    const stop = new AbortController();
    const endless = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('data: one\n\n'));
      },
    });
    const seen: string[] = [];
    const reading = readEvents(
      endless,
      new SseParser((e) => {
        seen.push(e.data);
        stop.abort();
      }),
      stop.signal,
    );
    await reading;
    expect(seen).to.deep.equal(['one']);
  });
});
