import { expect } from 'chai';
import * as oidc from 'openid-client';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually, request, type JsonResponse } from '../helpers/http.js';
import { Browser } from './browser.js';

export const CLIENT_ID = 'test-app';
export const CLIENT_SECRET = 'test-app-secret-0123456789abcdef0123';
export const APP = 'http://app.example.test';
export const REDIRECT_URI = `${APP}/callback`;
export const LOGOUT_URI = `${APP}/signed-out`;
export const SCOPE = 'openid profile phone offline_access';

/** The one client of these suites, as OIDC_CLIENTS takes it. */
export const testClient = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  client_name: 'Test App',
  redirect_uris: [REDIRECT_URI],
  post_logout_redirect_uris: [LOGOUT_URI],
  ...extra,
});

/** A person on the chat side: their phone and the name the gateway reports. */
export interface Person {
  phone: string;
  pushName?: string;
}

/** Posts a chat message to the webhook, signed when the service checks signatures (production). */
export type Chat = (text: string, who: Person) => Promise<JsonResponse>;

export function chatTo(base: string, secret?: string): Chat {
  return async (text, who) => {
    const raw = JSON.stringify(evolutionMessage({ text, phone: who.phone, pushName: who.pushName }));
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (secret) headers['x-hub-signature-256'] = WebhookAuth.sign(raw, secret);
    return request(base, 'POST', '/messaging-endpoint', { raw, headers });
  };
}

/**
 * An app signing people in through the provider, as openid-client does it (code + PKCE S256),
 * and the person's part in a browser: open the page, send its code in the chat, wait.
 */
export class RelyingParty {
  private constructor(
    readonly config: oidc.Configuration,
    private readonly chat: Chat,
  ) {}

  static async discover(issuer: string, chat: Chat): Promise<RelyingParty> {
    const config = await oidc.discovery(new URL(issuer), CLIENT_ID, CLIENT_SECRET, undefined, { execute: [oidc.allowInsecureRequests] });
    return new RelyingParty(config, chat);
  }

  /** The authorization request of an app (PKCE S256, state). */
  async authorize(extra: Record<string, string> = {}): Promise<{ url: string; verifier: string; state: string }> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(this.config, {
      redirect_uri: REDIRECT_URI,
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    });
    return { url: url.href, verifier, state };
  }

  /** Opens the sign-in page of an authorization request; its URL and the chat code on it. */
  async openPage(browser: Browser, authUrl: string): Promise<{ url: string; html: string; emoji: string }> {
    const page = await browser.follow(authUrl, REDIRECT_URI);
    expect(page.res.status, page.url).to.equal(200);
    expect(page.url).to.match(/\/oidc\/interaction\/[^/]+$/);
    const html = await page.res.text();
    const emoji = /data-emoji="([^"]+)"/.exec(html)?.[1];
    expect(emoji, html).to.be.a('string');
    return { url: page.url, html, emoji: emoji! };
  }

  /** Polls the page's status until it says where to go (the login is done); returns the app's callback URL. */
  async awaitCallback(browser: Browser, pageUrl: string): Promise<string> {
    const redirectTo = await eventually(
      async () => {
        const res = await browser.get(`${pageUrl}/status`);
        const body = (await res.json()) as { state: string; redirectTo?: string };
        expect(res.status, JSON.stringify(body)).to.equal(200);
        return body.redirectTo;
      },
      30000,
      200,
    );
    const back = await browser.follow(new URL(redirectTo, pageUrl).href, REDIRECT_URI);
    expect(back.url.startsWith(REDIRECT_URI), back.url).to.equal(true);
    return back.url;
  }

  /** The person's whole part: the page, the chat message, the wait; returns the app's callback URL. */
  async signIn(browser: Browser, authUrl: string, who: Person): Promise<string> {
    const page = await this.openPage(browser, authUrl);
    const hook = await this.chat(`PIN: ${page.emoji}`, who);
    expect(hook.status, hook.text).to.equal(200);
    return this.awaitCallback(browser, page.url);
  }

  /** A whole OpenID login in a fresh browser: the tokens the app holds, and the browser (with the provider's cookies). */
  async login(
    who: Person,
    browser = new Browser(),
  ): Promise<{ tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers; sub: string; browser: Browser }> {
    const { url, verifier, state } = await this.authorize();
    const callback = await this.signIn(browser, url, who);
    const tokens = await oidc.authorizationCodeGrant(this.config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state });
    return { tokens, sub: tokens.claims()!.sub, browser };
  }

  /** `prompt=none` from a browser: where the provider sends it back (a code when its session still stands). */
  async promptNone(browser: Browser): Promise<URL> {
    const { url } = await this.authorize({ prompt: 'none' });
    const back = await browser.follow(url, REDIRECT_URI);
    return new URL(back.url);
  }

  /** The userinfo endpoint with an access token: 200 or the HTTP status of the refusal. */
  async userinfoStatus(accessToken: string, sub: string): Promise<number> {
    return oidc.fetchUserInfo(this.config, accessToken, sub).then(
      () => 200,
      (err: { status?: number }) => err.status ?? 0,
    );
  }

  /** The refresh grant: 'ok' or the OAuth error code. */
  async refreshOutcome(refreshToken: string): Promise<string> {
    return oidc.refreshTokenGrant(this.config, refreshToken).then(
      () => 'ok',
      (err: { error?: string }) => err.error ?? String(err),
    );
  }
}
