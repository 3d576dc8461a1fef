import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { LINGER_BYTES, LINGER_MS } from '../../src/http/lingering-close.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { evolutionJwt, queueOf, sign } from '../messaging/support.js';

const HMAC_SECRET = 'webhook-bodies-hmac-secret-0123456789abcdef';
const JWT_KEY = 'webhook-bodies-jwt-key-0123456789abcdefghij';
const BEARER_KEY = 'webhook-bodies-bearer-key-0123456789abcdefg';
const MIB = 1024 * 1024;
/** a signature header that parses but matches no body */
const FAKE_SIGNATURE = `sha256=${'0'.repeat(64)}`;
/** body bytes for uploads that only need a size (shared: 200 uploads of 1 MiB each) */
const FILLER = Buffer.alloc(2 * MIB, 0x20);

/** An answer read off a raw connection: its status, its head and body as text, when it was complete. */
interface Answer {
  status: number;
  text: string;
  at: number;
}

/** What one raw connection got. */
interface Exchange {
  socket: net.Socket;
  /** the answer once its head and its Content-Length of body are in; null if the connection closed first */
  answered: Promise<Answer | null>;
  /** once the connection closed: what arrived (status null: no answer), the socket error if any (a reset), bytes sent */
  closed: Promise<{ status: number | null; text: string; at: number; error?: string; sent: number }>;
}

/**
 * A POST to the webhook on a raw socket: the head, then `send` bytes of body, then nothing more
 * (a stalled body when `send` is short of the declared length); with `flood`, body bytes as fast
 * as the connection takes them, and with `trickle`, that many bytes every 50 ms, until it closes.
 * Write errors (the server cutting the connection) are recorded, not thrown.
 */
function rawPost(
  port: number,
  opts: {
    headers: Record<string, string>;
    body?: Buffer;
    declared?: number;
    send?: number;
    localAddress?: string;
    chunked?: Buffer[];
    flood?: boolean;
    trickle?: number;
  },
): Exchange {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: opts.localAddress });
  let received = '';
  let error: string | undefined;
  let answer: (a: Answer | null) => void = () => undefined;
  const answered = new Promise<Answer | null>((resolve) => (answer = resolve));
  socket.on('data', (b: Buffer) => {
    received += b.toString('latin1');
    const end = received.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end));
    if (end >= 0 && length && received.length >= end + 4 + Number(length[1]))
      answer({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(received)![1]), text: received, at: Date.now() });
  });
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
  const closed = new Promise<{ status: number | null; text: string; at: number; error?: string; sent: number }>((resolve) => {
    socket.on('close', () => {
      answer(null);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received);
      resolve({ status: m ? Number(m[1]) : null, text: received, at: Date.now(), error, sent: socket.bytesWritten });
    });
  });
  const head = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', ...opts.headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.on('connect', () => {
    if (opts.chunked) {
      socket.write(`POST /messaging-endpoint HTTP/1.1\r\n${head}transfer-encoding: chunked\r\nconnection: close\r\n\r\n`);
      const parts = [...opts.chunked];
      const next = (): void => {
        const part = parts.shift();
        if (part === undefined) return void socket.write('0\r\n\r\n');
        socket.write(`${part.length.toString(16)}\r\n`);
        socket.write(part);
        socket.write('\r\n');
        setTimeout(next, 20);
      };
      next();
      return;
    }
    const body = opts.body ?? Buffer.alloc(0);
    const declared = opts.declared ?? body.length;
    socket.write(`POST /messaging-endpoint HTTP/1.1\r\n${head}content-length: ${declared}\r\nconnection: close\r\n\r\n`);
    const send = opts.send ?? body.length;
    if (send > 0) socket.write(body.length >= send ? body.subarray(0, send) : FILLER.subarray(0, send));
    if (opts.flood) {
      // one 2 MiB write at a time: the next once the socket has taken it (at once when the kernel did)
      const pump = (): void => {
        if (socket.writable && socket.write(FILLER)) setImmediate(pump);
      };
      socket.on('drain', pump);
      pump();
    }
    if (opts.trickle !== undefined) {
      const bit = FILLER.subarray(0, opts.trickle);
      const every = setInterval(() => socket.writable && socket.write(bit), 50);
      socket.on('close', () => clearInterval(every));
    }
  });
  return { socket, closed, answered };
}

/** The resident set of a process, bytes (what the attack grew by 966 MiB). */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

const message = (): Buffer => Buffer.from(JSON.stringify(evolutionMessage({ text: 'PIN: 🍎🚀🐱🌵' })));

describe('security: webhook bodies cost nothing until authenticated (production settings)', function () {
  this.timeout(90_000);
  let stack: Stack;
  let inbound: Queue;
  let port: number;
  /** accepted messages: jobs waiting on the inbound queue */
  const intake = async (): Promise<number> => (await inbound.getJobCounts('waiting')).waiting ?? 0;

  before(async function () {
    stack = await startStack({
      name: 'webhook-bodies',
      webs: 1,
      // no worker: every accepted message stays a waiting inbound job, where it can be counted
      workers: 0,
      env: {
        NODE_ENV: 'production',
        JWT_SECRET: randomBytes(32).toString('hex'),
        WEBHOOK_SECRET: HMAC_SECRET,
        WEBHOOK_JWT_KEY: JWT_KEY,
        WEBHOOK_BEARER_KEY: BEARER_KEY,
        // the defaults (the shared helpers relax the per-IP cap for other suites)
        WEBHOOK_IN_FLIGHT_PER_IP: '',
        WEBHOOK_UNVERIFIED_BYTES: '',
        REQUEST_TIMEOUT_MS: '',
      },
    });
    port = stack.webs[0]!.port;
    inbound = queueOf(stack.prefix, 'inbound');
  });
  after(async function () {
    await inbound?.close();
    await stack?.stop();
  });

  it('a request whose head carries no credential that passes gets 401 before a byte of its body is sent', async function () {
    const before = await intake();
    const heads: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-the-key-0123456789abcdef' },
      { authorization: `Bearer ${evolutionJwt('another-key-0123456789abcdefghijklm')}` },
      { 'x-hub-signature-256': 'sha256=nothex' },
    ];
    for (const headers of heads) {
      const x = rawPost(port, { headers, declared: 2 * MIB, send: 0 });
      const r = await x.answered;
      x.socket.destroy();
      expect(r?.status, JSON.stringify(headers)).to.equal(401);
      expect(r!.text).to.match(/"error":"AUTHENTICATION_FAILED"/);
      // the client is told not to send another request on it
      expect(r!.text).to.match(/\r\nConnection: close\r\n/i);
    }
    expect(await intake()).to.equal(before);
  });

  it('a 2 MiB unauthenticated body is 401 (no credential, or a signature that does not match), read by the client while it uploads, never 200', async function () {
    const big = Buffer.alloc(2 * MIB, 0x20);
    message().copy(big);
    const heads: Record<string, string>[] = [{}, { 'x-hub-signature-256': FAKE_SIGNATURE }];
    for (const headers of heads) {
      const r = await rawPost(port, { headers, body: big }).closed;
      // the 401 is read, never lost to a reset: the server drains the rest before it closes (lingering-close.ts)
      expect(r.status, `${JSON.stringify(headers)} ${r.error ?? ''}`).to.equal(401);
      expect(r.text).to.match(/"error":"AUTHENTICATION_FAILED"/);
      expect(r.error, JSON.stringify(headers)).to.equal(undefined);
    }
    // declared past what is ever read: 413 at once, whatever it carries
    const x = rawPost(port, { headers: { 'x-hub-signature-256': FAKE_SIGNATURE }, declared: 65 * MIB, send: 0 });
    const huge = await x.answered;
    x.socket.destroy();
    expect(huge?.status).to.equal(413);
  });

  it(`a refused upload is drained for at most ${LINGER_BYTES / MIB} MiB and ${LINGER_MS / 1000} s after its answer, then cut off`, async function () {
    // far past the bound: the answer is read, then the connection is cut once the node has read its share
    const flood = rawPost(port, { headers: {}, declared: 1024 * MIB, flood: true });
    const flooded = await flood.answered;
    expect(flooded?.status).to.equal(401);
    const cut = await flood.closed;
    // the kernel's buffers on both ends hold tens of MiB more than the node reads; 1 GiB was offered
    expect(cut.sent, `sent ${(cut.sent / MIB).toFixed(1)} MiB`).to.be.below(LINGER_BYTES + 64 * MIB);
    expect(cut.at - flooded!.at).to.be.below(LINGER_MS + 5_000);
    // a body that trickles never reaches the byte bound: cut at the time bound
    const slow = rawPost(port, { headers: {}, declared: 1024 * MIB, trickle: 1024 });
    const trickled = await slow.answered;
    expect(trickled?.status).to.equal(401);
    const timedOut = await slow.closed;
    expect(timedOut.sent).to.be.below(LINGER_BYTES);
    expect(timedOut.at - trickled!.at).to.be.below(LINGER_MS + 5_000);
  });

  it('a bad HMAC on a body streamed in chunks is 401 and nothing is queued; the right one is accepted', async function () {
    const raw = message();
    const parts = [raw.subarray(0, 40), raw.subarray(40, 90), raw.subarray(90)];
    const before = await intake();
    const bad = await rawPost(port, { headers: { 'x-hub-signature-256': sign(Buffer.concat([raw, Buffer.from(' ')]), HMAC_SECRET) }, chunked: parts }).closed;
    expect(bad.status).to.equal(401);
    expect(await intake()).to.equal(before);
    const good = await rawPost(port, { headers: { 'x-hub-signature-256': sign(raw, HMAC_SECRET) }, chunked: parts }).closed;
    expect(good.status, good.text).to.equal(200);
    expect(good.text).to.match(/"accepted":1/);
    expect(await intake()).to.equal(before + 1);
  });

  it('HMAC, bearer and Evolution JWT deliveries are still accepted', async function () {
    const before = await intake();
    const signed = message();
    const answers = await Promise.all([
      rawPost(port, { headers: { 'x-hub-signature-256': sign(signed, HMAC_SECRET) }, body: signed }).closed,
      rawPost(port, { headers: { authorization: `Bearer ${BEARER_KEY}` }, body: message() }).closed,
      rawPost(port, { headers: { authorization: `Bearer ${evolutionJwt(JWT_KEY)}` }, body: message() }).closed,
    ]);
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
    expect(await intake()).to.equal(before + 3);
  });

  it('an authenticated body that stalls is closed after REQUEST_TIMEOUT_MS (10 s), unanswered and unqueued', async function () {
    const before = await intake();
    const started = Date.now();
    const r = await rawPost(port, { headers: { authorization: `Bearer ${BEARER_KEY}` }, body: message(), declared: 10_000 }).closed;
    expect(r.status).to.equal(null);
    expect(r.at - started).to.be.at.least(9_500);
    expect(await intake()).to.equal(before);
  });

  it('200 stalled bodies with a signature that can never match from one network: RSS stays bounded, all but 4 refused 429, other networks served', async function () {
    const pid = stack.webs[0]!.child.pid!;
    const base = rss(pid);
    const stalled = Array.from({ length: 200 }, () => rawPost(port, { headers: { 'x-hub-signature-256': FAKE_SIGNATURE }, declared: MIB - 1, send: MIB - 2 }));
    // the refusals come at once; the rest sit until the request timeout
    let peak = base;
    const watch = setInterval(() => (peak = Math.max(peak, rss(pid))), 100);
    try {
      // gateways on another network are not held up: this one's requests in flight and its share of the byte budget are its own
      const signed = message();
      const legit = await Promise.all([
        rawPost(port, { headers: { authorization: `Bearer ${BEARER_KEY}` }, body: message(), localAddress: '127.0.0.2' }).closed,
        rawPost(port, { headers: { 'x-hub-signature-256': sign(signed, HMAC_SECRET) }, body: signed, localAddress: '127.0.0.2' }).closed,
      ]);
      expect(
        legit.map((r) => r.status),
        legit.map((r) => r.text).join('\n'),
      ).to.deep.equal([200, 200]);
      const outcomes = await Promise.all(stalled.map((s) => s.closed));
      const statuses = outcomes.map((o) => o.status);
      const refused = statuses.filter((s) => s === 429).length;
      const unanswered = statuses.filter((s) => s === null).length;
      // eslint-disable-next-line no-console
      console.log(
        `      RSS ${(base / MIB).toFixed(0)} MiB → peak ${(peak / MIB).toFixed(0)} MiB; ${refused} refused 429, ${unanswered} closed at the timeout`,
      );
      expect(
        statuses.every((s) => s === 429 || s === null),
        statuses.join(','),
      ).to.equal(true);
      // the per-IP cap (128) refuses 72; one network's share of the byte budget (4 MiB of 32) the rest but 4
      expect(refused).to.be.at.least(196);
      // 200 MiB were offered; the node holds at most that share and its buffers
      expect(peak - base).to.be.below(64 * MIB);
    } finally {
      clearInterval(watch);
      for (const s of stalled) s.socket.destroy();
    }
  });
});
