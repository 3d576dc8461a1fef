import { createHmac } from 'node:crypto';
import type Koa from 'koa';
import type { default as Provider, Interaction as InteractionDetails } from 'oidc-provider';
import { parseLoginResult } from '../registrations/login-result.js';
import { originOf } from '../registrations/origin.js';
import type { OidcConfig } from '../config.js';
import { AppError } from '../errors.js';
import type { AppState } from '../http/context.js';
import { sendJwks } from '../http/routes/jwks.js';
import type { Services } from '../services.js';
import { brandOf } from './branding.js';
import { imageOrigins, renderLoginPage, renderMessagePage } from '../demo/page.js';
import { cookieKeys, createProvider, INTERACTION_SEGMENT } from './provider.js';

/**
 * The provider's door in our Koa app, and its interaction step, which is the chat login: the
 * page shows an emoji string; the person sends it to us on WhatsApp; the page polls until the
 * login is there, then the interaction ends with that user (consent is implied: clients are
 * configured by the operator). The PIN behind the registration is never shown nor stored: it
 * is an HMAC of the interaction id and attempt under a server key.
 */
type Ctx = Koa.ParameterizedContext<AppState>;

export function oidcMiddleware(services: Services, oidc: OidcConfig): Koa.Middleware<AppState> {
  const { registrations, redis, keys, sessions, tokens, log, limits, oidcLogins } = services;
  const mount = oidc.mountPath;
  const pinKey = cookieKeys(services, oidc)[0]!;
  let provider: Promise<Provider> | undefined;
  // built on first use: it signs with the key ring, which may load after the process starts
  const op = (): Promise<Provider> => (provider ??= createProvider(services, oidc).catch((err: unknown) => {
    provider = undefined;
    throw err;
  }));
  const stateKey = (uid: string): string => keys.oidcInteractionLogin(uid);
  const pinFor = (uid: string, attempt: string): string => 'oidc-' + createHmac('sha256', pinKey).update(`${uid}:${attempt}`).digest('base64url');
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

  const finish = async (ctx: Ctx, details: InteractionDetails, accountId: string): Promise<string> => {
    const oidcProvider = await op();
    const clientId = String(details.params.client_id);
    const existing = details.grantId ? await oidcProvider.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === accountId ? existing : new oidcProvider.Grant({ accountId, clientId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const missingClaims = details.prompt.details.missingOIDCClaims;
    if (Array.isArray(missingClaims)) grant.addOIDCClaims(missingClaims as string[]);
    const grantId = await grant.save();
    // the browser it came from, for the person's list of sessions
    await oidcLogins.noteBrowser(accountId, grantId, originOf(ctx.get('user-agent'), ctx.ip));
    return oidcProvider.interactionResult(ctx.req, ctx.res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  };

  const showPage = async (ctx: Ctx, uid: string): Promise<void> => {
    const oidcProvider = await op();
    const details = await ownInteraction(ctx, uid);
    if (details.prompt.name !== 'login' && details.session?.accountId) {
      // signed in already; only consent is asked: implied for configured clients
      ctx.redirect(await finish(ctx, details, details.session.accountId));
      return;
    }
    const ttl = Math.max(60, details.exp - Math.floor(Date.now() / 1000));
    const { emoji, expiresAt } = await ensureRegistration(ctx, details.uid, ttl);
    const client = await oidcProvider.Client.find(String(details.params.client_id));
    const text = `PIN: ${emoji}`;
    const page = {
      brand: brandOf(client),
      flow: {
        kind: 'interaction' as const,
        statusUrl: `${mount}/${INTERACTION_SEGMENT}/${details.uid}/status`,
        emojiString: emoji,
        text,
        waLink: `https://wa.me/${services.config.demo.whatsappNumber ?? ''}?text=${encodeURIComponent(text)}`,
        expiresIn: Math.max(0, Math.round((expiresAt - Date.now()) / 1000)),
      },
    };
    // the shared login page (src/demo/page.ts) and its assets from this origin; nothing inline runs
    const images = ["'self'", 'data:', ...imageOrigins(page)].join(' ');
    ctx.set('Content-Security-Policy', `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src ${images}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'html';
    ctx.body = renderLoginPage(page);
  };

  const status = async (ctx: Ctx, uid: string): Promise<void> => {
    const oidcProvider = await op();
    const details = await ownInteraction(ctx, uid);
    ctx.set('Cache-Control', 'no-store');
    const state = await redis.hgetall(stateKey(details.uid));
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
      // The chat login opened a pin-auth session nobody holds: close it, the app gets OIDC tokens.
      const claims = tokens.verify(parseLoginResult(outcome.resultJson).token, 'access');
      await sessions.logout(claims, claims.sub);
      log.info('oidc login', { userId: claims.sub, client: String(details.params.client_id) });
      ctx.body = { state: 'done', redirectTo: await finish(ctx, details, claims.sub) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'LOGIN_DENIED') {
        const redirectTo = await oidcProvider.interactionResult(ctx.req, ctx.res, { error: 'access_denied', error_description: 'The sign-in was refused in the chat' }, { mergeWithLastSubmission: false });
        ctx.body = { state: 'denied', redirectTo };
        return;
      }
      // expired, cancelled or failed for good: a new code on the next view
      await redis.hdel(stateKey(details.uid), 'e');
      ctx.body = { state: 'restart' };
    }
  };

  return async (ctx, next) => {
    if (ctx.path !== mount && !ctx.path.startsWith(`${mount}/`)) return next();
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
          ctx.body = { success: false, error: e.error ?? 'invalid_request', message: e.error_description ?? 'Sign-in session ended; start again from the application' };
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
    // the doors that store something for anyone who asks (a sign-in, a pushed request) spend the IP group's budget
    if (route === '/auth' || route === '/request') await limits.consume('oidcAuthorize', limits.group(ctx.ip));
    // Everything else is the provider's: hand it the raw request with the mount path taken off
    // (`/oidc?x=1` is the provider's `/?x=1`).
    ctx.respond = false;
    const req = ctx.req as typeof ctx.req & { originalUrl?: string };
    req.originalUrl = req.url;
    const rest = req.url!.slice(mount.length);
    req.url = rest.startsWith('/') ? rest : `/${rest}`;
    await (await op()).callback()(req, ctx.res);
  };
}
