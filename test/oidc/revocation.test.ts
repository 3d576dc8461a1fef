import { expect } from 'chai';
import type { Redis } from 'ioredis';
import * as oidc from 'openid-client';
import { keys as keysOf, type Keys } from '../../src/redis/keys.js';
import { randomPhone, randomPin } from '../helpers/flow.js';
import { eventually, post, request } from '../helpers/http.js';
import type { Stack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { Browser } from './browser.js';
import { startProductionOidc } from './production-stack.js';
import { REDIRECT_URI, RelyingParty, type Chat, type Person } from './relying-party.js';

interface Status {
  state: string;
  redirectTo?: string;
}

/** A sign-in an attacker started (its browser, page and authorization request), answered YES by the victim. */
interface Phished {
  browser: Browser;
  pageUrl: string;
  auth: { url: string; verifier: string; state: string };
  userId: string;
}

/**
 * Round 4 (issue 48): the victim answers YES to a phished OpenID sign-in, reads "signed in", and
 * revokes it (STOP, sign-out everywhere, DELETE /sessions/:id); the attacker's page polls the
 * status before or after, from either of two web nodes, as often as it likes. Judged by outcome:
 * no code, no working token after the revocation; one grant however often the status is read.
 * Production settings, LOGIN_CONFIRMATION=on, two web nodes and a worker, openid-client as the app.
 */
describe('oidc: a revoked sign-in is never finished, and a sign-in finishes once (two web nodes)', function () {
  this.timeout(300000);
  let stack: Stack;
  let nodes: string[];
  let chat: Chat;
  let rp: RelyingParty;
  let redis: Redis;
  let k: Keys;

  before(async function () {
    let base: string;
    let issuer: string;
    ({ stack, base, issuer, chat } = await startProductionOidc('oidc-revoke', { LOGIN_CONFIRMATION: 'on', CHAT_REPLIES: 'true' }));
    const second = await stack.addWeb();
    nodes = [base, second.url];
    rp = await RelyingParty.discover(issuer, chat);
    redis = testRedis();
    k = keysOf(stack.prefix);
  });
  after(async function () {
    redis?.disconnect();
    await stack?.stop();
  });

  const userOf = (who: Person): Promise<string> =>
    eventually(
      async () => (await redis.get(k.identity('phone', who.phone))) ?? (await redis.get(k.identity('phone', who.phone.slice(1)))) ?? undefined,
      20000,
      50,
    );
  const openSessions = async (userId: string): Promise<number> => redis.zcard(k.userSessions(userId));

  /** The page's status poll on node `n` (the interaction's cookie goes to either node). */
  const poll = async (p: Phished, n = 0): Promise<Status> => {
    const res = await p.browser.get(`${nodes[n % nodes.length]}${new URL(p.pageUrl).pathname}/status`);
    const body = (await res.json()) as Status;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return body;
  };
  /** The poll's answer once the chat login is stored: 'pending' while it is still being completed after its session opened (a loaded machine shows it). */
  const settled = (p: Phished, n = 0): Promise<Status> =>
    eventually(async () => {
      const a = await poll(p, n);
      return a.state === 'pending' ? undefined : a;
    });

  /** Sends `PIN: <emoji>` from the victim's phone and waits for the question. */
  const codeSent = async (who: Person, emoji: string, waitAsked: () => Promise<boolean>): Promise<void> => {
    expect((await chat(`PIN: ${emoji}`, who)).status).to.equal(200);
    await eventually(async () => ((await waitAsked()) ? true : undefined), 20000, 100);
  };

  /** The attacker's sign-in, the victim's code and YES; returns once the chat login stands (no poll finished it). */
  const phish = async (who: Person): Promise<Phished> => {
    const browser = new Browser();
    const auth = await rp.authorize();
    const page = await rp.openPage(browser, auth.url);
    const p = { browser, pageUrl: page.url, auth, userId: '' };
    await codeSent(who, page.emoji, async () => (await poll(p)).state === 'awaiting-confirmation');
    const before = (await redis.get(k.identity('phone', who.phone))) ?? (await redis.get(k.identity('phone', who.phone.slice(1))));
    const sessionsBefore = before ? await openSessions(before) : 0;
    expect((await chat('YES', who)).status).to.equal(200);
    p.userId = await userOf(who);
    // "signed in": the chat login's session is open
    await eventually(async () => ((await openSessions(p.userId)) > sessionsBefore ? true : undefined), 20000, 50);
    return p;
  };

  /** The victim's own app session (a PIN login confirmed in the chat): its access token. */
  const appLogin = async (who: Person): Promise<string> => {
    const pin = randomPin();
    const reg = await post(nodes[0]!, '/register-pin', { pin });
    expect(reg.status, reg.text).to.equal(200);
    const check = () => post<{ verified: boolean; token: string; awaitingConfirmation?: boolean }>(nodes[0]!, '/check-login', { pin });
    await codeSent(who, String(reg.body.emojiString), async () => (await check()).body.awaitingConfirmation === true);
    expect((await chat('YES', who)).status).to.equal(200);
    return (await eventually(async () => ((await check()).body.verified ? (await check()).body.token : undefined), 20000, 100))!;
  };

  /** The user's grants stored in Redis (each a 30-day login), and the logins listed for them. */
  const grants = async (userId: string): Promise<{ stored: number; listed: number }> => {
    const prefix = k.oidc('Grant', '');
    const members = (await redis.zrange(k.oidcAccount(userId), '0', '-1')).filter((m) => m.startsWith(prefix));
    const stored = (await Promise.all(members.map((m) => redis.exists(m)))).reduce((a, b) => a + b, 0);
    const fields = Object.keys(await redis.hgetall(k.oidcLogins(userId)));
    return { stored, listed: new Set(fields.map((f) => f.slice(2))).size };
  };

  /**
   * What the attacker gets out of a status answer: it follows the way back to the app and
   * exchanges any code; true only if a token it got still works (userinfo or a refresh).
   */
  const cashIn = async (p: Phished, redirectTo: string): Promise<{ code: boolean; works: boolean; error: string | null }> => {
    const back = await p.browser.follow(new URL(redirectTo, p.pageUrl).href, REDIRECT_URI);
    if (!back.url.startsWith(REDIRECT_URI)) return { code: false, works: false, error: `ended at ${back.url} (${back.res.status})` };
    const callback = new URL(back.url);
    if (!callback.searchParams.get('code')) return { code: false, works: false, error: callback.searchParams.get('error') };
    const tokens = await oidc
      .authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: p.auth.verifier, expectedState: p.auth.state })
      .catch(() => undefined);
    if (!tokens) return { code: true, works: false, error: 'exchange refused' };
    const userinfo = await rp.userinfoStatus(tokens.access_token, tokens.claims()!.sub);
    const refresh = tokens.refresh_token ? await rp.refreshOutcome(tokens.refresh_token) : 'none';
    return { code: true, works: userinfo === 200 || refresh === 'ok', error: null };
  };

  /** STOP from the victim's phone, processed: the chat login's session is closed. */
  const stop = async (who: Person, userId: string): Promise<void> => {
    expect((await chat('STOP', who)).status).to.equal(200);
    await eventually(async () => ((await openSessions(userId)) === 0 && (await redis.exists(k.oidcSignedOut(userId))) === 1 ? true : undefined), 20000, 50);
  };

  /** After the revocation, the attacker's browser gets nothing without the chat either: prompt=none and a new sign-in. */
  const nothingLeft = async (p: Phished): Promise<void> => {
    const none = await rp.promptNone(p.browser);
    expect(none.searchParams.get('code'), none.href).to.equal(null);
    const again = await p.browser.follow((await rp.authorize()).url, REDIRECT_URI);
    expect(again.url, 'a new sign-in asks for the chat again').to.match(/\/oidc\/interaction\/[^/]+$/);
    expect(await again.res.text()).to.match(/data-emoji=/);
  };

  it('STOP after the YES, then the page polls (either node): denied, no code, no grant', async function () {
    const who = { phone: randomPhone() };
    const p = await phish(who);
    await stop(who, p.userId);
    const answer = await settled(p, 1);
    expect(answer.state).to.equal('denied');
    expect(await poll(p, 0), 'the same answer later, on the other node').to.deep.equal(answer);
    const got = await cashIn(p, answer.redirectTo!);
    expect(got).to.deep.equal({ code: false, works: false, error: 'access_denied' });
    expect(await grants(p.userId)).to.deep.equal({ stored: 0, listed: 0 });
    await nothingLeft(p);
  });

  it('sign-out everywhere from the app, then the poll: denied, no grant', async function () {
    const who = { phone: randomPhone() };
    const token = await appLogin(who);
    const p = await phish(who);
    const out = await request(nodes[0]!, 'DELETE', '/sessions', { token });
    expect(out.status, out.text).to.equal(200);
    const answer = await settled(p, 1);
    expect(answer.state).to.equal('denied');
    expect((await cashIn(p, answer.redirectTo!)).works).to.equal(false);
    expect((await grants(p.userId)).stored).to.equal(0);
  });

  it("DELETE /sessions/:id of the sign-in's chat login, then the poll: denied, no grant", async function () {
    const who = { phone: randomPhone() };
    const token = await appLogin(who);
    const p = await phish(who);
    const list = await request<{ sessions: { id: string; current: boolean }[] }>(nodes[0]!, 'GET', '/sessions', { token });
    const theirs = list.body.sessions.filter((s) => !s.current);
    expect(theirs, list.text).to.have.length(1);
    expect((await request(nodes[1]!, 'DELETE', `/sessions/${theirs[0]!.id}`, { token })).status).to.equal(200);
    const answer = await settled(p, 0);
    expect(answer.state).to.equal('denied');
    expect((await cashIn(p, answer.redirectTo!)).works).to.equal(false);
    expect((await grants(p.userId)).stored).to.equal(0);
  });

  it('the page polls first (done), then STOP, then the attacker follows and exchanges: no working token', async function () {
    const who = { phone: randomPhone() };
    const p = await phish(who);
    const answer = await settled(p, 1);
    expect(answer.state).to.equal('done');
    await stop(who, p.userId);
    const got = await cashIn(p, answer.redirectTo!);
    expect(got.works, JSON.stringify(got)).to.equal(false);
    await nothingLeft(p);
  });

  for (const delayMs of [0, 15, 60]) {
    it(`40 polls over both nodes racing STOP (sent after ${delayMs} ms): whatever they answer, nothing works after it`, async function () {
      const who = { phone: randomPhone() };
      const p = await phish(who);
      const polls = Array.from({ length: 40 }, (_, i) => new Promise<Status>((resolve, reject) => setTimeout(() => poll(p, i).then(resolve, reject), i)));
      const stopped = new Promise<void>((resolve, reject) => setTimeout(() => stop(who, p.userId).then(resolve, reject), delayMs));
      const answers = await Promise.all(polls);
      await stopped;
      // a poll finishing while STOP runs ends its own grant once it sees the sign-out: none is left
      await eventually(async () => ((await grants(p.userId)).stored === 0 ? true : undefined), 10000, 50);
      const ways = [...new Set(answers.filter((a) => a.redirectTo).map((a) => a.redirectTo!))];
      expect(ways.length, JSON.stringify(answers)).to.be.at.most(1);
      const last = await poll(p, 1);
      for (const way of new Set([...ways, ...(last.redirectTo ? [last.redirectTo] : [])])) {
        const got = await cashIn(p, way);
        expect(got.works, JSON.stringify(got)).to.equal(false);
      }
      await nothingLeft(p);
    });
  }

  it("40 concurrent polls over both nodes, no revocation: one grant, one listed login, one answer; the app's exchange works", async function () {
    const who = { phone: randomPhone() };
    const p = await phish(who);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => poll(p, i)));
    const later = [await settled(p, 0), await settled(p, 1)];
    const done = [...answers, ...later].filter((a) => a.state === 'done');
    expect(done.length).to.be.at.least(2);
    expect(new Set(done.map((a) => a.redirectTo)).size, JSON.stringify(done)).to.equal(1);
    expect(
      answers.every((a) => a.state === 'done' || a.state === 'pending'),
      JSON.stringify(answers),
    ).to.equal(true);
    expect(later.every((a) => a.state === 'done')).to.equal(true);
    expect(await grants(p.userId)).to.deep.equal({ stored: 1, listed: 1 });
    const got = await cashIn(p, done[0]!.redirectTo!);
    expect(got, JSON.stringify(got)).to.deep.equal({ code: true, works: true, error: null });
    expect((await grants(p.userId)).stored).to.equal(1);
  });
});
