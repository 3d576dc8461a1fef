import { createHmac } from 'node:crypto';
import type Koa from 'koa';
import type { default as Provider, Interaction as InteractionDetails } from 'oidc-provider';
import { parseLoginResult } from '../registrations/login-result.js';
import { originOf } from '../registrations/origin.js';
import type { OidcConfig } from '../config.js';
import { AppError } from '../errors.js';
import type { AppState } from '../http/context.js';
import type { TokenClaims } from '../auth/tokens.js';
import { sendJwks } from '../http/routes/jwks.js';
import type { Services } from '../services.js';
import { brandOf } from './branding.js';
import { imageOrigins, renderLoginPage, renderMessagePage } from '../demo/page.js';
import { requestLanguage } from '../demo/routes.js';
import { cookieKeys, INTERACTION_SEGMENT } from './provider.js';

/**
 * The provider's door in our Koa app, and its interaction step, which is the chat login: the
 * page shows an emoji string; the person sends it to us on WhatsApp; the page polls until the
 * login is there, then the interaction ends with that user (consent is implied: clients are
 * configured by the operator). The PIN behind the registration is never shown nor stored: it
 * is an HMAC of the interaction id and attempt under a server key.
 */
type Ctx = Koa.ParameterizedContext<AppState>;

/**
 * A top-level or frame navigation, as Fetch Metadata says (browsers send Sec-Fetch-Dest with
 * every request); a request without it (an older browser, a server, Node's fetch, which sends
 * only Sec-Fetch-Mode) is taken as one.
 */
const NAVIGATIONS = new Set(['', 'document', 'iframe', 'frame']);
function isNavigation(ctx: Ctx): boolean {
  return NAVIGATIONS.has(ctx.get('sec-fetch-dest'));
}

/** How long one poll may take to finish a sign-in before its claim is taken for dead (ms). */
const FINISH_MS = 30_000;

/**
 * The provider builds every URL it hands out (discovery, its redirects, the token endpoint a
 * client assertion must name) from the request's origin, read by Koa from `Host`, or from
 * `X-Forwarded-Host` and `X-Forwarded-Proto` behind a trusted proxy. It is given the issuer's
 * origin instead, so a caller's `Host` or `X-Forwarded-Host` cannot make a discovery document
 * point elsewhere (a shared cache would hand it to everyone), and behind a TLS proxy every URL
 * reads https. The client address stays the one the service took (TRUST_PROXY), as the
 * provider runs with `proxy` on (provider.ts).
 */
function asIssuersRequest(ctx: Ctx, origin: URL): void {
  const ip = ctx.ip;
  const headers = ctx.req.headers;
  headers.host = origin.host;
  headers['x-forwarded-host'] = origin.host;
  headers['x-forwarded-proto'] = origin.protocol.slice(0, -1);
  headers['x-forwarded-for'] = ip;
}

/** `op`: the provider (provider.ts lazyProvider) */
export function oidcMiddleware(services: Services, oidc: OidcConfig, op: () => Promise<Provider>): Koa.Middleware<AppState> {
  const { registrations, redis, keys, sessions, tokens, log, limits, oidcLogins } = services;
  const mount = oidc.mountPath;
  const pinKey = cookieKeys(services, oidc)[0]!;
  const stateKey = (uid: string): string => keys.oidcInteractionLogin(uid);
  const pinFor = (uid: string, attempt: string): string => `oidc-${createHmac('sha256', pinKey).update(`${uid}:${attempt}`).digest('base64url')}`;
  const publicOrigin = new URL(oidc.issuer);
  const interactionPath = new RegExp(`^${mount.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${INTERACTION_SEGMENT}/([A-Za-z0-9_-]{1,64})(/status)?$`);

  /** The interaction's registration: made on first view, made again (new attempt) once expired. */
  const ensureRegistration = async (ctx: Ctx, uid: string, ttlSeconds: number): Promise<{ emoji: string; pin: string; expiresAt: number }> => {
    const state = await redis.hgetall(stateKey(uid));
    let attempt = Number(state.a ?? '0');
    if (state.e) return { emoji: state.e, pin: pinFor(uid, String(attempt)), expiresAt: Number(state.x ?? '0') };
    // the browser's device and address, for the question asked in the chat (LOGIN_CONFIRMATION)
    const origin = originOf(ctx.get('user-agent'), ctx.ip);
    attempt += 1;
    const pin = pinFor(uid, String(attempt));
    // the server draws the emoji string; each new code spends the IP group's registration budget
    const { emojiString: emoji, expiresIn } = await registrations.register(pin, undefined, { ip: ctx.ip, via: 'http', origin });
    // when the code ends, for the page's countdown
    const expiresAt = Date.now() + expiresIn * 1000;
    await redis.multi().hset(stateKey(uid), 'e', emoji, 'a', attempt, 'x', expiresAt).expire(stateKey(uid), ttlSeconds).exec();
    return { emoji, pin, expiresAt };
  };

  /**
   * The interaction this browser holds (its cookie names it), and only if it is the one in the
   * URL: a uid learnt elsewhere (history, logs, a shared screen) serves and finishes nothing.
   */
  const ownInteraction = async (ctx: Ctx, uid: string): Promise<InteractionDetails> => {
    const details = await (await op()).interactionDetails(ctx.req, ctx.res);
    if (details.uid !== uid) throw new AppError('FORBIDDEN', 'This sign-in was started in another browser; start again from the application');
    return details;
  };

  /** Stores the app's grant of this sign-in for `accountId`; its id. */
  const saveGrant = async (details: InteractionDetails, accountId: string): Promise<string> => {
    const oidcProvider = await op();
    const clientId = String(details.params.client_id);
    const existing = details.grantId ? await oidcProvider.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === accountId ? existing : new oidcProvider.Grant({ accountId, clientId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const missingClaims = details.prompt.details.missingOIDCClaims;
    if (Array.isArray(missingClaims)) grant.addOIDCClaims(missingClaims as string[]);
    return grant.save();
  };

  /** Ends the interaction signed in as `accountId` (authenticated at `ts`, seconds) with `grantId`: where the browser goes on. */
  const finish = async (ctx: Ctx, accountId: string, grantId: string, ts?: number): Promise<string> => {
    // the browser it came from, for the person's list of sessions
    await oidcLogins.noteBrowser(accountId, grantId, originOf(ctx.get('user-agent'), ctx.ip));
    return (await op()).interactionResult(
      ctx.req,
      ctx.res,
      { login: { accountId, ...(ts === undefined ? {} : { ts }) }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  };

  /** Ends the interaction refused: the app hears access_denied. */
  const refuse = async (ctx: Ctx, description: string): Promise<string> =>
    (await op()).interactionResult(ctx.req, ctx.res, { error: 'access_denied', error_description: description }, { mergeWithLastSubmission: false });

  /**
   * A provider session (the browser signed in before) is enough to skip the chat only while it
   * holds a live grant: one whose login was ended (a sign-out that raced the session's save)
   * leaves an account on the session and nothing else, which must not mint a grant.
   */
  const holdsLiveGrant = async (sessionUid: string): Promise<boolean> => {
    const oidcProvider = await op();
    const session = await oidcProvider.Session.findByUid(sessionUid);
    const grantIds = Object.values(session?.authorizations ?? {}).flatMap((a) => (typeof a?.grantId === 'string' ? [a.grantId] : []));
    for (const id of grantIds) if (await oidcProvider.Grant.find(id)) return true;
    return false;
  };

  /**
   * The chat login finishes this sign-in, once, and only while it stands:
   * - the one poll that ends its pin-auth session (an atomic script: true for one caller) makes
   *   the grant; when a revocation (STOP, sign-out everywhere, DELETE /sessions/:id) ended the
   *   session first, no poll makes one and the app hears access_denied;
   * - a sign-out everywhere that ran while the grant was being made (its sweep may have missed
   *   it: the time it writes changed between the reads before and after), or one after the chat
   *   login that had not yet ended its session, is seen once the grant is stored, and the grant is
   *   ended here. The grant's index entry is written before that read and the sign-out writes its
   *   time before its sweep, so one of the two always finds the grant.
   * A provider session saved later by the browser's way back holds only that dead grant, which
   * skips nothing (holdsLiveGrant; the provider asks again for consent, prompt=none fails).
   */
  const finishChatLogin = async (ctx: Ctx, details: InteractionDetails, claims: TokenClaims): Promise<{ state: 'done' | 'denied'; redirectTo: string }> => {
    const signedOut = 'The sign-in was ended in the chat or the app before it finished';
    const [created, before] = await Promise.all([redis.hget(keys.session(claims.sub, claims.sid), 'createdAt'), oidcLogins.signedOutAt(claims.sub)]);
    // the chat login's session becomes the OpenID grant: a hand-off, not an end the trail records
    if (!(await sessions.end(claims.sub, claims.sid, undefined, 'handoff'))) return { state: 'denied', redirectTo: await refuse(ctx, signedOut) };
    // when the person signed in in the chat (ms): the pin-auth session's creation
    const loginAt = Number(created) || claims.iat * 1000;
    const grantId = await saveGrant(details, claims.sub);
    const after = await oidcLogins.signedOutAt(claims.sub);
    if (after !== before || after >= loginAt) {
      await oidcLogins.end(claims.sub, grantId);
      return { state: 'denied', redirectTo: await refuse(ctx, signedOut) };
    }
    log.info('oidc login', { userId: claims.sub, client: String(details.params.client_id) });
    return { state: 'done', redirectTo: await finish(ctx, claims.sub, grantId, Math.floor(loginAt / 1000)) };
  };

  const showPage = async (ctx: Ctx, uid: string): Promise<void> => {
    const oidcProvider = await op();
    const details = await ownInteraction(ctx, uid);
    if (details.prompt.name !== 'login' && details.session?.accountId && (await holdsLiveGrant(details.session.uid))) {
      // signed in already; only consent is asked: implied for configured clients
      const accountId = details.session.accountId;
      ctx.redirect(await finish(ctx, accountId, await saveGrant(details, accountId)));
      return;
    }
    const ttl = Math.max(60, details.exp - Math.floor(Date.now() / 1000));
    const { emoji, expiresAt } = await ensureRegistration(ctx, details.uid, ttl);
    const client = await oidcProvider.Client.find(String(details.params.client_id));
    const text = `PIN: ${emoji}`;
    // a healthy one of the configured numbers (messaging/health.ts), else WHATSAPP_NUMBER
    const whatsappNumber = (await services.health.writeTo())?.number ?? services.config.demo.whatsappNumber;
    const page = {
      brand: brandOf(client),
      lang: requestLanguage(ctx, services.config.replies.language),
      whatsappNumber,
      flow: {
        kind: 'interaction' as const,
        statusUrl: `${mount}/${INTERACTION_SEGMENT}/${details.uid}/status`,
        emojiString: emoji,
        text,
        waLink: `https://wa.me/${whatsappNumber ?? ''}?text=${encodeURIComponent(text)}`,
        expiresIn: Math.max(0, Math.round((expiresAt - Date.now()) / 1000)),
      },
    };
    // the shared login page (src/demo/page.ts) and its assets from this origin; nothing inline runs
    const images = ["'self'", 'data:', ...imageOrigins(page)].join(' ');
    ctx.set(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src ${images}; connect-src 'self'; ` +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    ctx.set('Cache-Control', 'no-store');
    ctx.vary('Accept-Language');
    ctx.type = 'html';
    ctx.body = renderLoginPage(page);
  };

  const status = async (ctx: Ctx, uid: string): Promise<void> => {
    const details = await ownInteraction(ctx, uid);
    ctx.set('Cache-Control', 'no-store');
    const key = stateKey(details.uid);
    const state = await redis.hgetall(key);
    // finished (here or on another node): every later poll gets the same answer, nothing new is made
    if ((state.o === 'done' || state.o === 'denied') && state.r) {
      ctx.body = { state: state.o, redirectTo: state.r };
      return;
    }
    if (state.f) {
      // another poll is finishing it; one that never wrote its answer (its node died) ends the code
      const stale = Date.now() - Number(state.f) > FINISH_MS;
      if (stale) await redis.hdel(key, 'e', 'f');
      ctx.body = { state: stale ? 'restart' : 'pending' };
      return;
    }
    if (!state.e) {
      ctx.body = { state: 'restart' };
      return;
    }
    try {
      // the PIN is the server's own (no guess): no caller, so no budget is spent by the page's polls
      const outcome = await registrations.check(pinFor(details.uid, state.a ?? '0'));
      if (outcome.state !== 'verified') {
        ctx.body = { state: outcome.state === 'awaiting' ? 'awaiting-confirmation' : 'pending' };
        return;
      }
      // The chat login opened a pin-auth session nobody holds: the app gets OIDC tokens instead.
      const claims = tokens.verify(parseLoginResult(outcome.resultJson).token, 'access');
      // one poll finishes (on any node): the others see the claim, then its answer
      const [[, claimed]] = (await redis
        .multi()
        .hsetnx(key, 'f', Date.now())
        .expire(key, FINISH_MS / 1000, 'NX')
        .exec()) as [[Error | null, number]];
      if (claimed !== 1) {
        ctx.body = { state: 'pending' };
        return;
      }
      let answer: { state: 'done' | 'denied'; redirectTo: string };
      try {
        answer = await finishChatLogin(ctx, details, claims);
      } catch (err) {
        // the next poll tries again (its session is ended by now, so it is told the sign-in was)
        await redis.hdel(key, 'f').catch(() => undefined);
        throw err;
      }
      await redis.hset(key, 'o', answer.state, 'r', answer.redirectTo);
      ctx.body = answer;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'LOGIN_DENIED') {
        ctx.body = { state: 'denied', redirectTo: await refuse(ctx, 'The sign-in was refused in the chat') };
        return;
      }
      // expired, cancelled or failed for good: a new code on the next view
      await redis.hdel(key, 'e');
      ctx.body = { state: 'restart' };
    }
  };

  return async (ctx, next) => {
    if (ctx.path !== mount && !ctx.path.startsWith(`${mount}/`)) return next();
    asIssuersRequest(ctx, publicOrigin);
    // no page of the provider may be framed (clickjacking of the sign-in or sign-out buttons); its
    // own page policies add to this one, and the interaction page sets a whole policy of its own
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Content-Security-Policy', "frame-ancestors 'none'; base-uri 'none'; object-src 'none'");
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    const route = ctx.path.slice(mount.length);
    if (route === `/jwks`) {
      // one JWKS for everything we sign, verify-only keys included (the provider knows only signing keys)
      sendJwks(ctx, services);
      return;
    }
    const m = interactionPath.exec(ctx.path);
    if (m && ctx.method === 'GET') {
      await limits.consume('oidcInteraction', limits.group(ctx.ip));
      try {
        await (m[2] ? status(ctx, m[1]!) : showPage(ctx, m[1]!));
      } catch (err) {
        const e = err as { statusCode?: number; error?: string; error_description?: string };
        // another browser's sign-in (ownInteraction), or the provider's refusal of an expired or missing interaction cookie
        const foreign = err instanceof AppError && err.code === 'FORBIDDEN';
        const ended = !(err instanceof AppError) && typeof e.statusCode === 'number' && e.statusCode < 500;
        if (!foreign && !ended) throw err;
        if (m[2]) {
          // the page's poll: the API's error body
          if (foreign) throw err;
          ctx.status = e.statusCode!;
          ctx.body = {
            success: false,
            error: e.error ?? 'invalid_request',
            message: e.error_description ?? 'Sign-in session ended; start again from the application',
          };
          return;
        }
        // a person opened the page: a page tells them what to do (nothing of the sign-in is on it)
        ctx.status = foreign ? 403 : e.statusCode!;
        ctx.set('Cache-Control', 'no-store');
        ctx.type = 'html';
        const why = foreign ? 'This sign-in was started in another browser.' : 'This sign-in has ended or was started in another browser.';
        ctx.body = renderMessagePage(brandOf(undefined), 'Start again', `<p>${why} Go back to the application and sign in again from this browser.</p>`);
      }
      return;
    }
    // A sign-in is a page the browser navigates to: an image, script or fetch of it (any page can
    // embed thirty) is refused before it stores or spends anything. Browsers without Fetch
    // Metadata send no Sec-Fetch-Dest and are taken as navigations.
    if (route === '/auth' && !isNavigation(ctx)) throw new AppError('FORBIDDEN', 'A sign-in opens as a page (a navigation), not as an image, script or fetch');
    // the doors that store something for anyone who asks (a sign-in, a pushed request) spend the IP group's budget
    if (route === '/auth' || route === '/request') await limits.consume('oidcAuthorize', limits.group(ctx.ip));
    // Everything else is the provider's: hand it the raw request with the mount path taken off
    // (`/oidc?x=1` is the provider's `/?x=1`). Built first, so a build that fails (the signing
    // keys not loaded yet) is answered here, before the response is the provider's.
    const provider = await op();
    ctx.respond = false;
    const req = ctx.req as typeof ctx.req & { originalUrl?: string };
    req.originalUrl = req.url;
    const rest = req.url!.slice(mount.length);
    req.url = rest.startsWith('/') ? rest : `/${rest}`;
    await provider.callback()(req, ctx.res);
  };
}
