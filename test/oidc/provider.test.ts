import { expect } from 'chai';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import { randomPhone, sendChat } from '../helpers/flow.js';
import { eventually, get } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { Browser } from './browser.js';
import { chatTo, CLIENT_ID, LOGOUT_URI, REDIRECT_URI, RelyingParty, testClient } from './relying-party.js';

/**
 * "Sign in with WhatsApp" as an app sees it: openid-client as a real relying party against the
 * provider (two web nodes and a worker sharing Redis), the interaction page driven over HTTP,
 * the chat message posted to the webhook by the test.
 */
describe('oidc: an app signs people in through the chat with OpenID Connect', function () {
  this.timeout(90000);
  let stack: InProcessStack;
  let issuer: string;
  let config: oidc.Configuration;
  let rp: RelyingParty;

  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'oidc',
      webs: 2,
      env: {
        CHAT_REPLIES: 'false',
        OIDC_CLIENTS: JSON.stringify([testClient()]),
      },
    });
    // both nodes serve one issuer (as behind a load balancer); the second node's port stands for it
    issuer = `http://localhost:${stack.webs[0]!.port}/oidc`;
    // the chat message reaches the other web node's webhook: the stores are shared
    rp = await RelyingParty.discover(issuer, chatTo(stack.webs[1]!.url));
    config = rp.config;
  });
  after(async function () {
    await stack?.stop();
  });

  const authorize = (extra: Record<string, string> = {}) => rp.authorize(extra);
  const signIn = (browser: Browser, authUrl: string, who: { phone: string; pushName: string }): Promise<string> => rp.signIn(browser, authUrl, who);

  it('discovery, code + PKCE, ID token verified with the JWKS, userinfo, refresh with rotation, logout', async function () {
    expect(config.serverMetadata()).to.include({ issuer });
    expect(config.serverMetadata().code_challenge_methods_supported).to.include('S256');
    const phone = randomPhone();
    const browser = new Browser();
    const { url, verifier, state } = await authorize();
    const callback = await signIn(browser, url, { phone, pushName: 'Ana Maria Silva' });

    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    // the ID token verifies against the service's JWKS alone, and under its own discovery's jwks_uri
    const jwks = (await get(stack.url, '/.well-known/jwks.json')).body as unknown as JSONWebKeySet;
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, createLocalJWKSet(jwks), { issuer, audience: CLIENT_ID });
    expect(protectedHeader.alg).to.equal('ES256');
    expect(protectedHeader.kid).to.equal(jwks.keys[0]!.kid);
    expect((await get(issuer.replace('localhost', '127.0.0.1'), '/jwks')).body).to.deep.equal(jwks);
    const sub = payload.sub!;

    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info).to.deep.include({
      sub,
      name: 'Ana Maria Silva',
      given_name: 'Ana',
      family_name: 'Maria Silva',
      phone_number: phone,
      phone_number_verified: true,
    });

    // refresh rotates: the new refresh token works, the old one is spent (and its reuse ends the grant)
    expect(tokens.refresh_token).to.be.a('string');
    const renewed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(renewed.refresh_token).to.be.a('string').and.not.equal(tokens.refresh_token);
    expect((await oidc.fetchUserInfo(config, renewed.access_token, sub)).sub).to.equal(sub);
    const reuse = await oidc.refreshTokenGrant(config, tokens.refresh_token!).then(
      () => 'accepted',
      (err: { error?: string }) => err.error,
    );
    expect(reuse).to.equal('invalid_grant');

    // RP-initiated logout: the confirmation form, then back to the app
    const endUrl = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGOUT_URI, state: 'bye' });
    const confirm = await browser.follow(endUrl.href, LOGOUT_URI);
    expect(confirm.res.status).to.equal(200);
    const form = await confirm.res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(form)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)?.[1];
    expect(action && xsrf, form).to.be.a('string');
    const done = await browser.postForm(new URL(action!, confirm.url).href, { xsrf: xsrf!, logout: 'yes' });
    expect(done.status).to.equal(303);
    const after = new URL(done.headers.get('location')!, confirm.url);
    expect(`${after.origin}${after.pathname}`).to.equal(LOGOUT_URI);
    expect(after.searchParams.get('state')).to.equal('bye');
    // signed out: a new authorization asks for the chat login again
    const again = await browser.follow((await authorize()).url, REDIRECT_URI);
    expect(again.url).to.match(/\/oidc\/interaction\//);
  });

  it('a redirect URI that is not registered: an error page, never a redirect (invalid_redirect_uri)', async function () {
    const { url } = await authorize();
    const wrong = new URL(url);
    wrong.searchParams.set('redirect_uri', 'https://attacker.example/callback');
    const res = await new Browser().get(wrong.href);
    expect(res.status).to.equal(400);
    expect(res.headers.get('location')).to.equal(null);
    expect(await res.text()).to.include('invalid_redirect_uri');
  });

  it('a wrong PKCE verifier, then a reused code: invalid_grant, and the reuse revokes the tokens of the first exchange', async function () {
    const first = await authorize();
    const callback = await signIn(new Browser(), first.url, { phone: randomPhone(), pushName: 'Bo' });
    const wrongVerifier = await oidc
      .authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: first.state })
      .then(
        () => 'accepted',
        (err: { error?: string }) => err.error,
      );
    expect(wrongVerifier).to.equal('invalid_grant');

    const second = await authorize();
    const callback2 = await signIn(new Browser(), second.url, { phone: randomPhone(), pushName: 'Cy' });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callback2), { pkceCodeVerifier: second.verifier, expectedState: second.state });
    const sub = tokens.claims()!.sub;
    expect((await oidc.fetchUserInfo(config, tokens.access_token, sub)).sub).to.equal(sub);
    const reused = await oidc.authorizationCodeGrant(config, new URL(callback2), { pkceCodeVerifier: second.verifier, expectedState: second.state }).then(
      () => 'accepted',
      (err: { error?: string }) => err.error,
    );
    expect(reused).to.equal('invalid_grant');
    // RFC 6749 §4.1.2: the tokens issued from the code should be revoked
    const revoked = await oidc.fetchUserInfo(config, tokens.access_token, sub).then(
      () => 200,
      (err: { status?: number }) => err.status,
    );
    expect(revoked).to.equal(401);
  });
});

describe('oidc: with the sign-in confirmed in the chat (LOGIN_CONFIRMATION)', function () {
  this.timeout(90000);
  let stack: InProcessStack;
  let rp: RelyingParty;
  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'oidc-confirm',
      env: {
        LOGIN_CONFIRMATION: 'on',
        OIDC_CLIENTS: JSON.stringify([testClient()]),
      },
    });
    rp = await RelyingParty.discover(`http://localhost:${stack.webs[0]!.port}/oidc`, chatTo(stack.url));
  });
  after(async function () {
    await stack?.stop();
  });

  /** Opens the page, sends its code, waits for the question, answers; returns where the browser is sent. */
  const answer = async (reply: string): Promise<URL> => {
    const browser = new Browser();
    const page = await rp.openPage(browser, (await rp.authorize({ scope: 'openid' })).url);
    const phone = randomPhone();
    await sendChat(stack.url, `PIN: ${page.emoji}`, { phone });
    const poll = async (): Promise<{ state: string; redirectTo?: string }> =>
      (await browser.get(`${page.url}/status`)).json() as Promise<{ state: string; redirectTo?: string }>;
    await eventually(async () => ((await poll()).state === 'awaiting-confirmation' ? true : undefined), 20000, 200);
    await sendChat(stack.url, reply, { phone });
    return new URL(await rp.awaitCallback(browser, page.url));
  };

  it('the page waits for the answer; YES signs in (a code comes back), NO ends with access_denied', async function () {
    const yes = await answer('YES');
    expect(yes.searchParams.get('code')).to.be.a('string');
    const no = await answer('NO');
    expect(`${no.origin}${no.pathname}`).to.equal(REDIRECT_URI);
    expect(no.searchParams.get('error')).to.equal('access_denied');
    expect(no.searchParams.get('code')).to.equal(null);
  });
});
