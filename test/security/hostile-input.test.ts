import { expect } from 'chai';
import fc from 'fast-check';
import type { Socket } from 'socket.io-client';
import { fullLogin } from '../helpers/flow.js';
import { againWhileUnavailable, get } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { connectSocket } from './client.js';
import { DOCUMENTED_ERRORS, errorBodyProblem } from './expect-error.js';
import { bodyText, cloudText, contentType, corruption, encode, encoding, evolutionText, hostileString, objectText, toBytes } from './hostile.js';

/**
 * The hostile-input sweep: fast-check throws arbitrary and malicious bodies, headers and socket
 * packets at every endpoint and event of a real web + worker. Every answer must be a documented
 * 4xx with the documented error body (or a success), never a 5xx or a dropped connection, and both
 * processes must still be alive and able to sign someone in afterwards.
 */
const RUNS = { endpoint: 250, get: 80, socketEmit: 300, socketRaw: 250 };
const SOCKET_MAX_BYTES = 16 * 1024;
/** FUZZ_SEED=<seed of a failure report> replays that run */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const RESERVED = new Set(['connect', 'connect_error', 'disconnect', 'disconnecting', 'newListener', 'removeListener']);

interface Case {
  method: string;
  path: string;
  body?: Buffer;
  headers: Record<string, string>;
}
interface Outcome {
  status: number;
  text: string;
}

/**
 * An id segment that reaches the server as an id: not empty, and not a dot segment (`.`, `..`,
 * `%2e`…), which the client's URL parser resolves away before sending (`/messages/.` goes out
 * as `/messages/`, another route).
 */
const sendableSegment = (v: string): boolean => v !== '' && !/^(\.|%2e){1,2}$/i.test(v);

const short = (s: string, n = 300): string => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

/** Runs a property; a failure is reported by the property's own short message, not the (huge) input. */
async function check<T extends unknown[]>(prop: fc.IAsyncProperty<T>, runs: number): Promise<void> {
  const details = await fc.check(prop, { numRuns: runs, endOnFailure: true, seed: SEED });
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`failed after ${details.numRuns} cases (seed ${details.seed}): ${short(cause, 2000)}`);
  }
}

describe('security: hostile-input sweep (fast-check) over every endpoint and socket event', function () {
  this.timeout(120000);
  let stack: Stack;
  let token: string;
  let refreshToken: string;
  const counts: Record<string, number> = {};

  async function send(c: Case): Promise<Outcome> {
    const res = await fetch(stack.url + c.path, {
      method: c.method,
      headers: c.headers,
      body: c.body ? new Uint8Array(c.body) : undefined,
      signal: AbortSignal.timeout(10000),
    });
    return { status: res.status, text: await res.text() };
  }

  /** Why an answer breaks the rules, or null. 2xx answers must be the endpoint's success shape. */
  function problem(o: Outcome, successShape: (b: Record<string, unknown>) => boolean): string | null {
    let body: unknown;
    try {
      body = JSON.parse(o.text);
    } catch {
      return `not JSON (status ${o.status})`;
    }
    if (o.status >= 200 && o.status < 300) return successShape(body as Record<string, unknown>) ? null : 'unexpected success body';
    return errorBodyProblem(o.status, body, o.text);
  }

  async function sweep(
    name: string,
    runs: number,
    arb: fc.Arbitrary<Case>,
    successShape: (b: Record<string, unknown>) => boolean = (b) => b.success === true,
  ): Promise<void> {
    counts[name] = 0;
    await check(
      fc.asyncProperty(arb, async (c) => {
        counts[name]! += 1;
        const what = (): string => `${c.method} ${c.path}\nheaders ${JSON.stringify(c.headers)}\nbody ${short(c.body?.toString('utf8') ?? '')}`;
        const o = await againWhileUnavailable(() => send(c)).catch((err: unknown) => {
          throw new Error(`no answer (${String(err)}): ${what()}`);
        });
        const p = problem(o, successShape);
        if (p !== null) throw new Error(`${p}: ${o.status} ${short(o.text)}\n${what()}`);
      }),
      runs,
    );
  }

  const auth = (): fc.Arbitrary<Record<string, string>> =>
    fc.oneof(
      fc.constant({}),
      fc.constant({ authorization: `Bearer ${token}` }),
      fc.constant({ authorization: `Bearer ${refreshToken}` }),
      fc.stringMatching(/^[\x20-\x7E]{0,300}$/).map((v) => ({ authorization: v })),
      fc.stringMatching(/^[A-Za-z0-9._-]{0,300}$/).map((v) => ({ authorization: `Bearer ${v}` })),
    );

  const post = (path: string, fields: readonly string[], opts: { protectedRoute?: boolean; shaped?: fc.Arbitrary<string> } = {}): fc.Arbitrary<Case> =>
    fc
      .record({
        text: opts.shaped ? fc.oneof({ weight: 3, arbitrary: opts.shaped }, { weight: 1, arbitrary: bodyText(fields) }) : bodyText(fields),
        type: contentType,
        corrupt: corruption,
        enc: encoding,
        auth: opts.protectedRoute ? auth() : fc.constant({}),
      })
      .map(({ text, type, corrupt, enc, auth: a }) => {
        const { body, header } = encode(toBytes(text, corrupt), enc);
        const headers: Record<string, string> = { ...a };
        if (type !== undefined) headers['content-type'] = type;
        if (header !== undefined) headers['content-encoding'] = header;
        return { method: 'POST', path, body, headers };
      });

  before(async function () {
    stack = await startStack({ name: 'sec-fuzz' });
    ({ token, refreshToken } = (await fullLogin(stack.url)).login);
  });
  after(async function () {
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(
      `      hostile-input cases run: ${total} (${Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
    );
    await stack?.stop();
  });

  it('POST /register-pin', () => sweep('register-pin', RUNS.endpoint, post('/register-pin', ['pin', 'emojiString'])));
  it('POST /check-login', () => sweep('check-login', RUNS.endpoint, post('/check-login', ['pin'])));
  it('POST /refresh-token, with and without a valid token', () =>
    sweep('refresh-token', RUNS.endpoint, post('/refresh-token', ['refreshToken', 'id'], { protectedRoute: true })));
  it('POST /logout, with and without a valid token', () => sweep('logout', RUNS.endpoint, post('/logout', ['userId', 'id'], { protectedRoute: true })));
  it('POST /send-message, with and without a valid token', () =>
    sweep('send-message', RUNS.endpoint, post('/send-message', ['phoneNumber', 'message', 'channel'], { protectedRoute: true })));
  it('POST /messaging-endpoint (Evolution and Cloud API shapes, and anything else)', () =>
    sweep(
      'messaging-endpoint',
      RUNS.endpoint * 2,
      post('/messaging-endpoint', ['event', 'instance', 'data', 'object', 'entry'], { shaped: fc.oneof(evolutionText, cloudText) }),
      (b) => b.received === true,
    ));
  it('GET /profile, /health and the webhook handshake with hostile headers and queries', () => {
    const query = fc
      .array(fc.tuple(fc.constantFrom('hub.mode', 'hub.verify_token', 'hub.challenge', '__proto__', 'x'), hostileString), { maxLength: 4 })
      .map((pairs) =>
        pairs.length ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, ''))}`).join('&')}` : '',
      );
    const arb = fc
      .record({ path: fc.constantFrom('/profile', '/health', '/messaging-endpoint', '/sessions'), query, auth: auth() })
      .map(({ path, query: q, auth: a }) => ({ method: 'GET', path: path + q, headers: a }));
    return sweep('get', RUNS.get * 3, arb, (b) => b.success === true || b.status === 'ok');
  });

  it('DELETE /sessions/:id with hostile ids, with and without a valid token', () => {
    const id = fc
      .oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/), hostileString)
      .map((v) => encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, '')))
      .filter(sendableSegment);
    const arb = fc.record({ id, auth: auth() }).map(({ id: i, auth: a }) => ({ method: 'DELETE', path: `/sessions/${i}`, headers: a }));
    return sweep('delete-session', RUNS.get, arb);
  });

  it('GET /messages/:id with hostile ids, with and without a valid token', () => {
    const id = fc
      .oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/), fc.nat().map(String), hostileString)
      .map((v) => encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, '')))
      .filter(sendableSegment);
    const arb = fc.record({ id, auth: auth() }).map(({ id: i, auth: a }) => ({ method: 'GET', path: `/messages/${i}`, headers: a }));
    return sweep('get-message', RUNS.get, arb);
  });

  describe('socket events', function () {
    let socket: Socket;
    beforeEach(async function () {
      socket = await connectSocket(stack.url);
    });
    afterEach(function () {
      socket?.close();
    });

    /** A socket answer (ack or pin-error) must be a documented error or a success. */
    function socketProblem(answer: unknown): string | null {
      if (typeof answer !== 'object' || answer === null) return 'answer is not an object';
      const a = answer as Record<string, unknown>;
      if (a.success === true || typeof a.pinId === 'string') return null;
      if (typeof a.error !== 'string' || DOCUMENTED_ERRORS[a.error] === undefined || DOCUMENTED_ERRORS[a.error]! >= 500) return `error ${String(a.error)}`;
      if (typeof a.message !== 'string' || a.message === '') return 'no message';
      return null;
    }

    it('emitted by socket.io-client: any event name, any arguments (binary too), acknowledged', async function () {
      counts['socket-emit'] = 0;
      const arg = fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.record(
          { pin: fc.oneof(hostileString, fc.jsonValue({ maxDepth: 2 })), emojiString: fc.oneof(hostileString, fc.jsonValue({ maxDepth: 2 })) },
          { requiredKeys: [] },
        ),
        fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
      );
      const event = fc.oneof(
        fc.constantFrom('register-pin', 'cancel-auth', 'error', 'pin-registered', 'auth-success', '__proto__', 'constructor'),
        fc.string({ maxLength: 20 }),
      );
      await check(
        fc.asyncProperty(
          event.filter((e) => !RESERVED.has(e)),
          fc.array(arg, { maxLength: 3 }),
          async (name, args) => {
            counts['socket-emit']! += 1;
            if (JSON.stringify(args).length > SOCKET_MAX_BYTES / 2) return;
            let answer: unknown;
            try {
              answer = await socket.timeout(5000).emitWithAck(name, ...args);
            } catch (err) {
              throw new Error(`${name} ${short(JSON.stringify(args))}: no acknowledgement (${String(err)}; connected ${socket.connected})`);
            }
            const p = socketProblem(answer);
            if (p) throw new Error(`${name} ${short(JSON.stringify(args))} → ${p}: ${short(JSON.stringify(answer))}`);
          },
        ),
        RUNS.socketEmit,
      );
    });

    it('raw packets: hostile JSON (deep nesting, __proto__ keys, lone surrogates) answered by pin-error', async function () {
      counts['socket-raw'] = 0;
      const payload = fc.oneof(objectText(['pin', 'emojiString']), bodyText(['pin', 'emojiString']));
      await check(
        fc.asyncProperty(fc.constantFrom('register-pin', 'cancel-auth', 'anything'), payload, async (name, text) => {
          counts['socket-raw']! += 1;
          let frame = `2[${JSON.stringify(name)},${text}]`;
          try {
            JSON.parse(frame.slice(1));
          } catch {
            frame = `2[${JSON.stringify(name)},${JSON.stringify(text)}]`; // not JSON: send it as a string
          }
          if (Buffer.byteLength(frame) > SOCKET_MAX_BYTES - 8) return;
          const answer = await new Promise<unknown>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no answer in 5 s')), 5000);
            const done = (v: unknown): void => {
              clearTimeout(timer);
              socket.off('pin-error', done).off('pin-registered', done).off('disconnect', gone);
              resolve(v);
            };
            const gone = (reason: string): void => {
              clearTimeout(timer);
              reject(new Error(`disconnected: ${reason}`));
            };
            socket.on('pin-error', done).on('pin-registered', done).once('disconnect', gone);
            socket.io.engine.write(frame);
          }).catch((err: unknown) => {
            throw new Error(`${short(frame)} → ${String(err)}`);
          });
          const p = socketProblem(answer);
          if (p) throw new Error(`${short(frame)} → ${p}: ${short(JSON.stringify(answer))}`);
        }),
        RUNS.socketRaw,
      );
    });

    it('malformed packets end only that connection; the server stays up', async function () {
      const frames = [
        '2[',
        '2',
        '2{"a":1}',
        '2["disconnect"]',
        '2[1,2]',
        '5-["x",{"_placeholder":true,"num":9}]',
        `2${'['.repeat(4000)}${']'.repeat(4000)}`,
        'zz',
        '0{"x":',
      ];
      counts['socket-malformed'] = frames.length;
      for (const frame of frames) {
        const s = await connectSocket(stack.url);
        s.io.engine.write(frame);
        await new Promise((r) => setTimeout(r, 50));
        s.close();
      }
      const alive = await connectSocket(stack.url);
      const answer = await alive.timeout(5000).emitWithAck('cancel-auth', { pin: 'no-such-pin' });
      alive.close();
      expect(answer).to.include({ success: false, error: 'PIN_NOT_FOUND' });
    });
  });

  // after the socket sweep: mocha runs a suite's own tests before its nested suites
  describe('afterwards', function () {
    it('both processes are alive, nothing failed with a 500, and a normal login works', async function () {
      for (const p of [...stack.webs, ...stack.workers]) expect(p.child.exitCode, p.output().slice(-2000)).to.equal(null);
      expect((await get(stack.url, '/health')).status).to.equal(200);
      const { login } = await fullLogin(stack.url);
      expect(login.verified).to.equal(true);
      const output = stack.webs[0]!.output();
      expect(output, 'a request failed with a 500').not.to.match(/request failed|socket event failed|unhandled/i);
    });
  });
});
