import { expect } from 'chai';
import { PinAuthClient, PinAuthError, SERVICE_ERROR_CODES, type LoginStatus, type Session } from '@pin-auth/client';
import { ERROR_STATUS } from '../../src/errors.js';
import { randomPhone, randomPin, sendChat } from '../helpers/flow.js';
import { post } from '../helpers/http.js';
import { startProcess, startStack, stopProcess, type Stack } from '../helpers/processes.js';

/** What a PinAuthError the promise rejects with looks like. */
async function rejection(p: Promise<unknown>): Promise<PinAuthError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(PinAuthError);
    return err as PinAuthError;
  }
  throw new Error('expected a rejection');
}

/** A fetch that records each call's path, status and time. */
function recordingFetch(): { fetch: typeof fetch; calls: { path: string; status: number; at: number; retryAfter: string | null }[] } {
  const calls: { path: string; status: number; at: number; retryAfter: string | null }[] = [];
  return {
    calls,
    fetch: async (input, init) => {
      const at = Date.now();
      const res = await fetch(input, init);
      calls.push({ path: new URL(String(input)).pathname, status: res.status, at, retryAfter: res.headers.get('retry-after') });
      return res;
    },
  };
}

describe('client: the typed client against a running service', function () {
  this.timeout(60000);
  let stack: Stack;
  // no refresh leeway, so presenting a spent refresh token again is reuse at once (the leeway's
  // retry is tested in test/faults)
  before(async () => (stack = await startStack({ name: 'client', webs: 1, workers: 1, env: { REFRESH_REUSE_SECONDS: '0' } })));
  after(async () => stack?.stop());

  it('startLogin over the socket: emoji string, wa.me link with the text, then the session', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url, whatsappNumber: '+1 555 123 4567' });
    const login = await client.startLogin();
    expect([...new Intl.Segmenter().segment(login.emojiString)]).to.have.length(8); // drawn by the service (EMOJI_LENGTH): the client sends none
    expect(login.text).to.equal(`PIN: ${login.emojiString}`);
    expect(login.waLink).to.equal(`https://wa.me/15551234567?text=${encodeURIComponent(login.text)}`);
    expect(login.pinId).to.be.a('string').and.not.equal('');
    expect(login.expiresIn).to.be.greaterThan(0);
    const statuses: LoginStatus[] = [];
    login.onStatus((s) => statuses.push(s));
    const hook = await sendChat(stack.url, login.text, { phone: randomPhone(), pushName: 'Ana Silva' });
    expect(hook.status).to.equal(200);
    const session = await login.session;
    expect(session.user.name).to.equal('Ana');
    expect(session.token).to.match(/^eyJ/);
    expect(statuses).to.deep.equal(['waiting', 'signed-in']);
    // a listener attached later hears the current status
    const late: LoginStatus[] = [];
    login.onStatus((s) => late.push(s));
    expect(late).to.deep.equal(['signed-in']);
    expect((await client.profile(session)).surname).to.equal('Silva');
  });

  it('polling only (no socket): the session through check-login', async function () {
    const rec = recordingFetch();
    const client = new PinAuthClient({ baseUrl: stack.url, transport: 'polling', pollIntervalMs: 200, fetch: rec.fetch });
    const login = await client.startLogin();
    await sendChat(stack.url, login.text, { phone: randomPhone() });
    const session = await login.session;
    expect(session.refreshToken).to.match(/^eyJ/);
    expect(rec.calls.filter((c) => c.path === '/check-login').length).to.be.greaterThan(0);
    expect(rec.calls[0]!.path).to.equal('/register-pin');
  });

  it('refresh rotates: new tokens work, the spent refresh token is refused and closes the session', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url });
    const login = await client.startLogin();
    await sendChat(stack.url, login.text, { phone: randomPhone() });
    const first = await login.session;
    const second = await client.refresh(first);
    expect(second.refreshToken).to.not.equal(first.refreshToken);
    expect(second.user).to.deep.equal(first.user);
    expect((await client.profile(second)).id).to.equal(first.user.id);
    const reuse = await rejection(client.refresh(first));
    expect(reuse.code).to.equal('AUTHENTICATION_FAILED');
    expect(reuse.status).to.equal(401);
    expect((await rejection(client.profile(second))).code).to.equal('AUTHENTICATION_FAILED');
  });

  it('logout: the tokens stop working at once', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url });
    const login = await client.startLogin();
    await sendChat(stack.url, login.text, { phone: randomPhone() });
    const session: Session = await login.session;
    await client.logout(session);
    expect((await rejection(client.profile(session))).code).to.equal('AUTHENTICATION_FAILED');
  });

  it("exportAccount and deleteAccount: the person's own data, then its erasure; the receipt names no one and the tokens stop working", async function () {
    const client = new PinAuthClient({ baseUrl: stack.url });
    const phone = randomPhone();
    const login = await client.startLogin();
    await sendChat(stack.url, login.text, { phone });
    const session: Session = await login.session;
    const data = await client.exportAccount(session);
    expect(data.userId).to.equal(session.user.id);
    expect(data.holdings.account.id).to.equal(session.user.id);
    expect(data.holdings.identifiers).to.deep.include({ kind: 'phone', value: phone, linked: true });
    expect(data.holdings.sessions).to.have.length(1);
    const receipt = await client.deleteAccount(session);
    expect(receipt.id).to.match(/^er_/);
    expect(receipt.actor).to.equal('user');
    expect(JSON.stringify(receipt)).to.not.include(session.user.id);
    expect(JSON.stringify(receipt)).to.not.include(phone.slice(1));
    expect((await rejection(client.profile(session))).code).to.equal('AUTHENTICATION_FAILED');
    expect((await rejection(client.deleteAccount(session))).code).to.equal('AUTHENTICATION_FAILED');
    expect((await rejection(client.exportAccount(session))).code).to.equal('AUTHENTICATION_FAILED');
  });

  it('cancel: the session rejects with CANCELLED and the service forgets the registration', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url });
    const pin = randomPin();
    const login = await client.startLogin({ pin });
    await login.cancel();
    expect(login.status).to.equal('cancelled');
    expect((await rejection(login.session)).code).to.equal('CANCELLED');
    const check = await post(stack.url, '/check-login', { pin });
    expect(check.status).to.equal(404);
  });

  it('typed errors by code: a bad emoji string is VALIDATION_ERROR (400) with details, over HTTP and over the socket', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url, transport: 'polling' });
    const invalid = await rejection(client.startLogin({ emojiString: 'abc' }));
    expect(invalid.code).to.equal('VALIDATION_ERROR');
    expect(invalid.details).to.be.an('array').that.is.not.empty;
    // over the socket the same codes arrive by acknowledgement
    expect(invalid.status).to.equal(400);
    const bySocket = await rejection(new PinAuthClient({ baseUrl: stack.url }).startLogin({ emojiString: 'abc' }));
    expect(bySocket.code).to.equal('VALIDATION_ERROR');
  });

  it('is importable by its package name, @pin-auth/client (Node condition)', async function () {
    const specifier = '@pin-auth/client';
    const mod = (await import(specifier)) as { PinAuthClient: unknown };
    expect(mod.PinAuthClient).to.equal(PinAuthClient);
  });

  it("knows every code of the service's error model, and the contract's LOGIN_DENIED and LOGIN_FAILED", function () {
    // the client keeps its own list (it imports nothing from the server): kept in step here
    expect(SERVICE_ERROR_CODES).to.include.members([...Object.keys(ERROR_STATUS), 'LOGIN_DENIED', 'LOGIN_FAILED']);
  });

  it('reconnects after its web node restarts, re-joins, and still gets the session', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url, pollIntervalMs: 300 });
    const login = await client.startLogin();
    const old = stack.webs.shift()!;
    await stopProcess(old);
    // the same port, as a restarted node (or another node behind the same address) would be
    const web = await startProcess('web', { ...stack.env, PORT: String(old.port) });
    stack.webs.push(web);
    await sendChat(old.url, login.text, { phone: randomPhone() });
    const session = await login.session;
    expect(session.user.id).to.be.a('string');
  });
});

describe('client: expiry and Retry-After (short PIN lifetime, one check per PIN per second)', function () {
  this.timeout(60000);
  let stack: Stack;
  before(
    async () =>
      (stack = await startStack({
        name: 'client-limits',
        webs: 1,
        workers: 1,
        env: { PIN_TTL_SECONDS: '3', RATE_CHECK_PIN_PER_SECOND: '1', RATE_CHECK_PIN_BURST: '1' },
      })),
  );
  after(async () => stack?.stop());

  it('polling honours Retry-After on 429, and the login still completes', async function () {
    const rec = recordingFetch();
    const client = new PinAuthClient({ baseUrl: stack.url, transport: 'polling', pollIntervalMs: 50, fetch: rec.fetch });
    const login = await client.startLogin();
    const deadline = Date.now() + 2500;
    while (!rec.calls.some((c) => c.status === 429) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await sendChat(stack.url, login.text, { phone: randomPhone() });
    await login.session;
    const checks = rec.calls.filter((c) => c.path === '/check-login');
    const limited = checks.findIndex((c) => c.status === 429);
    expect(limited, JSON.stringify(checks)).to.be.greaterThan(-1);
    const retryAfter = Number(checks[limited]!.retryAfter);
    expect(retryAfter).to.be.greaterThan(0);
    for (let i = 0; i < checks.length - 1; i++) {
      if (checks[i]!.status === 429) expect(checks[i + 1]!.at - checks[i]!.at, 'waited Retry-After').to.be.at.least(Number(checks[i]!.retryAfter) * 1000 - 20);
    }
  });

  for (const transport of ['auto', 'polling'] as const) {
    it(`a code nobody sends expires: PIN_EXPIRED, status expired (${transport})`, async function () {
      const client = new PinAuthClient({ baseUrl: stack.url, transport, pollIntervalMs: 500 });
      const login = await client.startLogin();
      const err = await rejection(login.session);
      expect(err.code).to.equal('PIN_EXPIRED');
      expect(login.status).to.equal('expired');
    });
  }
});

describe('client: confirmation in the chat (LOGIN_CONFIRMATION=on)', function () {
  this.timeout(60000);
  let stack: Stack;
  before(async () => (stack = await startStack({ name: 'client-confirm', webs: 1, workers: 1, env: { LOGIN_CONFIRMATION: 'on' } })));
  after(async () => stack?.stop());

  /** Waits for a status, failing after a deadline. */
  const reaches = (login: { status: LoginStatus; onStatus(fn: (s: LoginStatus) => void): () => void }, status: LoginStatus): Promise<void> =>
    new Promise((resolve, reject) => {
      if (login.status === status) return resolve();
      const t = setTimeout(() => reject(new Error(`status ${login.status}, never ${status}`)), 15000);
      const off = login.onStatus((s) => {
        if (s !== status) return;
        clearTimeout(t);
        off();
        resolve();
      });
    });

  for (const transport of ['auto', 'polling'] as const) {
    it(`awaiting confirmation, then NO: LOGIN_DENIED, status denied (${transport})`, async function () {
      const client = new PinAuthClient({ baseUrl: stack.url, transport, pollIntervalMs: 300 });
      const login = await client.startLogin();
      const phone = randomPhone();
      await sendChat(stack.url, login.text, { phone });
      await reaches(login, 'awaiting-confirmation');
      await sendChat(stack.url, 'NO', { phone });
      const err = await rejection(login.session);
      expect(err.code).to.equal('LOGIN_DENIED');
      expect(login.status).to.equal('denied');
    });
  }

  it('awaiting confirmation, then YES: signed in; sessions listed, one closed, then everywhere', async function () {
    const client = new PinAuthClient({ baseUrl: stack.url });
    const phone = randomPhone();
    const signIn = async (): Promise<Session> => {
      const login = await client.startLogin();
      await sendChat(stack.url, login.text, { phone });
      await reaches(login, 'awaiting-confirmation');
      await sendChat(stack.url, 'YES', { phone });
      return login.session;
    };
    const a = await signIn();
    const b = await signIn();
    const listed = await client.sessions(b);
    expect(listed.map((s) => s.current)).to.have.members([true, false]);
    // registered over the socket, whose handshake names the client (ws alone sends no User-Agent)
    expect(listed.map((s) => s.device)).to.deep.equal(['Node.js app', 'Node.js app']);
    await client.endSession(b, listed.find((s) => !s.current)!.id);
    expect((await rejection(client.profile(a))).code).to.equal('AUTHENTICATION_FAILED');
    expect((await rejection(client.endSession(b, 'no-such-session'))).code).to.equal('SESSION_NOT_FOUND');
    expect(await client.signOutEverywhere(b)).to.equal(1);
    expect((await rejection(client.profile(b))).code).to.equal('AUTHENTICATION_FAILED');
  });
});
