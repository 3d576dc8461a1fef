import type { SessionInfo } from '@pin-auth/client';
import { expect } from 'chai';
import * as oidc from 'openid-client';
import { randomPhone, randomPin } from '../helpers/flow.js';
import { eventually, get, post, request } from '../helpers/http.js';
import type { Stack } from '../helpers/processes.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { startProductionOidc } from './production-stack.js';
import { RelyingParty, type Chat, type Person } from './relying-party.js';

/** a row of GET /sessions, as the shipped client types it */
type Listed = SessionInfo;

/**
 * One sign-out means everywhere: an app signed the person in through the provider (openid-client
 * as the relying party, production settings); STOP from the phone, sign-out-everywhere and the
 * end of that one login each leave the app's access token, its refresh token and the browser's
 * provider session (prompt=none) dead. GET /sessions lists the login beside the app's sessions.
 */
describe('oidc: a sign-out ends the OpenID logins too', function () {
  this.timeout(180000);
  let stack: Stack;
  let base: string;
  let chat: Chat;
  let rp: RelyingParty;

  before(async function () {
    ({ stack, base, chat } = await startProductionOidc('oidc-signout'));
    rp = await RelyingParty.discover(`http://localhost:${new URL(base).port}/oidc`, chat);
  });
  after(async function () {
    await stack?.stop();
  });

  /** A PIN login of the same person in this service's own app: its access token. */
  const appLogin = async (who: Person): Promise<string> => {
    const pin = randomPin();
    const reg = await post(base, '/register-pin', { pin });
    expect(reg.status, reg.text).to.equal(200);
    expect((await chat(`PIN: ${String(reg.body.emojiString)}`, who)).status).to.equal(200);
    const login = await eventually(
      async () => {
        const r = await post<{ verified: boolean; token: string }>(base, '/check-login', { pin });
        return r.body.verified ? r.body : undefined;
      },
      30000,
      100,
    );
    return login.token;
  };

  const listed = async (token: string): Promise<Listed[]> => {
    const res = await get<{ sessions: Listed[] }>(base, '/sessions', token);
    expect(res.status, res.text).to.equal(200);
    return res.body.sessions;
  };

  /** Everything the app and the browser hold of one OpenID login, and whether each still works. */
  const stillWorks = async (login: Awaited<ReturnType<RelyingParty['login']>>) => ({
    userinfo: await rp.userinfoStatus(login.tokens.access_token, login.sub),
    refresh: await rp.refreshOutcome(login.tokens.refresh_token!),
    promptNone: (await rp.promptNone(login.browser)).searchParams,
  });

  const expectDead = async (login: Awaited<ReturnType<RelyingParty['login']>>): Promise<void> => {
    const now = await stillWorks(login);
    expect(now.userinfo, 'userinfo').to.equal(401);
    expect(now.refresh, 'refresh grant').to.equal('invalid_grant');
    expect(now.promptNone.get('code'), 'prompt=none code').to.equal(null);
    expect(now.promptNone.get('error')).to.equal('login_required');
  };

  it("STOP from the phone: the app's access token, its refresh token and prompt=none are dead", async function () {
    const who = { phone: randomPhone(), pushName: 'Stop Person' };
    const login = await rp.login(who);
    // alive before: each check below can fail
    expect(await rp.userinfoStatus(login.tokens.access_token, login.sub)).to.equal(200);
    expect((await rp.promptNone(login.browser)).searchParams.get('code')).to.be.a('string');

    expect((await chat('STOP', who)).status).to.equal(200);
    await eventually(async () => ((await rp.userinfoStatus(login.tokens.access_token, login.sub)) === 401 ? true : undefined), 30000, 200);
    await expectDead(login);
  });

  it('DELETE /sessions: the OpenID login listed beside the app session, then ended with it', async function () {
    const who = { phone: randomPhone(), pushName: 'Everywhere Person' };
    const login = await rp.login(who);
    const token = await appLogin(who);
    const before = await listed(token);
    expect(before.map((s) => s.kind).sort()).to.deep.equal(['app', 'oidc']);
    const oidcLogin = before.find((s) => s.kind === 'oidc')!;
    expect(oidcLogin.id).to.match(/^oidc\.[A-Za-z0-9_-]+$/);
    expect(oidcLogin.client).to.deep.equal({ id: 'test-app', name: 'Test App' });
    expect(oidcLogin.current).to.equal(false);
    expect(oidcLogin.device).to.equal('Node.js app');
    expect(oidcLogin.ip).to.match(/^127\.0\.0\.x$|::\/48$/);
    expect(Date.parse(oidcLogin.lastUsedAt)).to.be.at.least(Date.parse(oidcLogin.createdAt));
    expect(Date.parse(oidcLogin.expiresAt)).to.be.greaterThan(Date.now());
    expect(before.find((s) => s.kind === 'app')!.current).to.equal(true);

    const out = await request(base, 'DELETE', '/sessions', { token });
    expect(out.status, out.text).to.equal(200);
    expect(out.body.closed).to.equal(2);
    await expectDead(login);
    // and a new OpenID login after the sign-out works again (the sign-out is not a ban)
    const again = await rp.login(who);
    expect(await rp.userinfoStatus(again.tokens.access_token, again.sub)).to.equal(200);
  });

  it('DELETE /sessions/oidc.<id> ends that login alone; ids of the two kinds never stand for each other', async function () {
    const who = { phone: randomPhone(), pushName: 'One Person' };
    const first = await rp.login(who);
    const second = await rp.login(who);
    const token = await appLogin(who);
    const mine = await listed(token);
    const logins = mine.filter((s) => s.kind === 'oidc').sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    expect(logins).to.have.length(2);
    expect(logins[0]!.id).to.not.equal(logins[1]!.id);
    const firstId = logins[0]!.id;

    // a refresh is a use: the login's lastUsedAt moves (and the app holds the rotated pair from now on)
    const usedBefore = logins[0]!.lastUsedAt;
    const renewed = await oidc.refreshTokenGrant(rp.config, first.tokens.refresh_token!);
    const usedAfter = (await listed(token)).find((s) => s.id === firstId)!.lastUsedAt;
    expect(Date.parse(usedAfter)).to.be.greaterThan(Date.parse(usedBefore));

    // the app session's id with the OpenID prefix, and an OpenID id without it, are nobody's
    const appSid = mine.find((s) => s.kind === 'app')!.id;
    expect((await request(base, 'DELETE', `/sessions/oidc.${appSid}`, { token })).status).to.equal(404);
    expect((await request(base, 'DELETE', `/sessions/${firstId.slice('oidc.'.length)}`, { token })).status).to.equal(404);
    // another person's token cannot end it
    const other = await appLogin({ phone: randomPhone() });
    const foreign = await request(base, 'DELETE', `/sessions/${firstId}`, { token: other });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error).to.equal('SESSION_NOT_FOUND');
    expect(await rp.userinfoStatus(renewed.access_token, first.sub)).to.equal(200);

    const ended = await request(base, 'DELETE', `/sessions/${firstId}`, { token });
    expect(ended.status, ended.text).to.equal(200);
    expect(await rp.userinfoStatus(renewed.access_token, first.sub)).to.equal(401);
    expect(await rp.refreshOutcome(renewed.refresh_token!)).to.equal('invalid_grant');
    expect((await rp.promptNone(first.browser)).searchParams.get('code')).to.equal(null);
    // the other login and the app session live on
    expect(await rp.userinfoStatus(second.tokens.access_token, second.sub)).to.equal(200);
    expect((await rp.promptNone(second.browser)).searchParams.get('code')).to.be.a('string');
    expect((await get(base, '/profile', token)).status).to.equal(200);
    const left = (await listed(token)).map((s) => s.id);
    expect(left).to.not.include(firstId);
    expect(left).to.have.length(2);
    expect((await request(base, 'DELETE', `/sessions/${firstId}`, { token })).status).to.equal(404);
  });
});

describe('oidc: on a 3-primary Redis Cluster, an OpenID login and its end by STOP', function () {
  this.timeout(180000);
  let topo: ClusterTopology;
  let stack: Stack;
  let chat: Chat;
  let rp: RelyingParty;

  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
    let base: string;
    ({ stack, base, chat } = await startProductionOidc('oidc-cluster', topo.env()));
    rp = await RelyingParty.discover(`http://localhost:${new URL(base).port}/oidc`, chat);
  });
  after(async function () {
    await stack?.stop();
    await topo?.stop();
  });

  it('the provider stores across slots (records, grant lists, account index), and STOP ends the login', async function () {
    const who = { phone: randomPhone() };
    const login = await rp.login(who);
    expect(await rp.userinfoStatus(login.tokens.access_token, login.sub)).to.equal(200);
    const renewed = await oidc.refreshTokenGrant(rp.config, login.tokens.refresh_token!);
    expect((await rp.promptNone(login.browser)).searchParams.get('code')).to.be.a('string');
    expect((await chat('STOP', who)).status).to.equal(200);
    await eventually(async () => ((await rp.userinfoStatus(renewed.access_token, login.sub)) === 401 ? true : undefined), 30000, 200);
    expect(await rp.refreshOutcome(renewed.refresh_token!)).to.equal('invalid_grant');
    expect((await rp.promptNone(login.browser)).searchParams.get('error')).to.equal('login_required');
  });
});
