import type { Next } from 'koa';
import { ADMIN_SCOPES, type AdminCaller, type AdminScope, actorText } from '../../accounts/actor.js';
import { API_KEY_PATTERN, isApiKeyText } from '../../accounts/api-keys.js';
import { ADMIN_ROLE_NAME } from '../../accounts/roles.js';
import { parseBearer } from '../../auth/bearer.js';
import { parseRoles } from '../../auth/roles.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { AdminLoginThrottle } from '../admin/login-throttle.js';
import { fromAnotherSite } from '../admin/same-origin.js';
import { requestMeta } from '../audit-meta.js';
import type { AppContext } from '../context.js';

export interface AdminState {
  admin?: AdminCaller;
}

/**
 * What a route needs of its caller: a scope (an admin has every one, a key those it was given),
 * `any` (any caller the door lets in: GET /me), or `session` (an admin signed in through the
 * chat, never an API key: managing the keys themselves).
 */
export type AdminNeed = AdminScope | 'any' | 'session';

/** Why the door refused a credential, as the audit trail's `admin.auth-failed` says it. */
type FailReason = 'malformed' | 'bad-token' | 'unknown-key' | 'not-admin';

/** The failure throttle of one deployment's services, shared by every route's door. */
const throttles = new WeakMap<Services, AdminLoginThrottle>();

function throttleOf(services: Services): AdminLoginThrottle {
  let t = throttles.get(services);
  if (t === undefined) {
    const { adminFailuresPer15Minutes, ipv6PrefixLength } = services.config.rateLimits;
    // the same budget (keys `rl:adminfail`) as the dashboard's and /metrics' wrong passwords
    t = new AdminLoginThrottle(services.redis, services.keys, adminFailuresPer15Minutes, ipv6PrefixLength, services.log);
    throttles.set(services, t);
  }
  return t;
}

/**
 * An admin route's door, in this order:
 * 1. a request a browser says comes from another site (Sec-Fetch-Site, Origin) is 403 FORBIDDEN,
 *    whatever it carries (the console is served from this origin; machines send neither header);
 * 2. an IP group that has spent its budget of wrong credentials (RATE_ADMIN_FAILURES_PER_15_MINUTES,
 *    shared with the dashboard and /metrics) is 429 RATE_LIMITED with Retry-After, right credential or not;
 * 3. `Authorization: Bearer pak_…` is an API key: unknown, revoked or wrong 401
 *    AUTHENTICATION_FAILED; otherwise an access token of an open session whose user holds the
 *    `admin` role now (read from the user record, so a role taken away closes the door at once):
 *    a bad token 401, a person without the role 403 FORBIDDEN. No credential at all: 401, not
 *    counted (a browser's first visit). Each refused credential counts against the IP group and
 *    is audited (`admin.auth-failed`: reason, IP group, request id; never what was presented);
 * 4. the caller spends one request of its budget (RATE_ADMIN_ACTIONS_PER_MINUTE per actor): 429
 *    with Retry-After past it;
 * 5. the route's need: a scope the caller lacks, or key management by an API key, 403 FORBIDDEN.
 */
export function adminAccess(services: Services, need: AdminNeed) {
  const throttle = throttleOf(services);
  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (fromAnotherSite(ctx)) throw new AppError('FORBIDDEN', 'The admin API answers only requests from its own origin');
    const state = await throttle.state(ctx.ip);
    if (state.retryAfter !== null) {
      ctx.state.log.warn('admin API refused: too many failures', { ipGroup: throttle.group(ctx.ip), path: ctx.path });
      throw new AppError('RATE_LIMITED', 'Too many failed admin sign-ins from this network', { retryAfter: state.retryAfter });
    }
    const caller = await admit(services, throttle, ctx);
    await throttle.succeeded(ctx.ip, ctx.path, state.failures);
    await services.limits.consume('adminAction', actorText(caller.actor));
    if (need === 'session') {
      if (caller.actor.kind !== 'admin') throw new AppError('FORBIDDEN', 'API keys are managed by an admin signed in, not by an API key');
    } else if (need !== 'any' && !caller.scopes.has(need)) {
      throw new AppError('FORBIDDEN', `This needs the ${need} scope`);
    }
    (ctx.state as AdminState).admin = caller;
    await next();
  };
}

/** Who the credential is, or the refusal (counted and audited). */
async function admit(services: Services, throttle: AdminLoginThrottle, ctx: AppContext): Promise<AdminCaller> {
  const header = ctx.get('authorization');
  if (header === '') throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token or API key');
  const refuse = async (reason: FailReason, error: AppError, about: { userId?: string; keyId?: string } = {}): Promise<never> => {
    await throttle.failed(ctx.ip, ctx.path);
    await services.audit
      .record({
        type: 'admin.auth-failed',
        ...(about.userId !== undefined ? { userId: about.userId } : {}),
        requestId: ctx.state.requestId,
        ipGroup: throttle.group(ctx.ip),
        detail: { reason, method: ctx.method, path: ctx.path.slice(0, 200), ...(about.keyId !== undefined ? { keyId: about.keyId } : {}) },
      })
      .catch((err: unknown) =>
        ctx.state.log.warn('audit record failed', { type: 'admin.auth-failed', error: err instanceof Error ? err.message : String(err) }),
      );
    throw error;
  };
  const bearer = parseBearer(header);
  if (bearer === null) return refuse('malformed', new AppError('AUTHENTICATION_FAILED', 'Expected Authorization: Bearer <access token or API key>'));
  if (isApiKeyText(bearer)) {
    const key = await services.apiKeys.verify(bearer);
    // the id part of a well-formed key is no secret (lists and the trail name keys by it): it tells which key a leak was
    const keyId = API_KEY_PATTERN.exec(bearer)?.[1];
    if (key === null) return refuse('unknown-key', new AppError('AUTHENTICATION_FAILED', 'Unknown or revoked API key'), keyId !== undefined ? { keyId } : {});
    return { actor: { kind: 'key', keyId: key.id }, scopes: new Set(key.scopes) };
  }
  let sub: string;
  try {
    const claims = await services.sessions.authenticate(bearer);
    ctx.state.claims = claims;
    sub = claims.sub;
  } catch (err) {
    if (err instanceof AppError && err.code === 'AUTHENTICATION_FAILED') return refuse('bad-token', err);
    throw err;
  }
  const roles = parseRoles(await services.redis.hget(services.keys.user(sub), 'roles'), []);
  if (!roles.includes(ADMIN_ROLE_NAME)) return refuse('not-admin', new AppError('FORBIDDEN', 'This needs the admin role'), { userId: sub });
  return { actor: { kind: 'admin', userId: sub }, scopes: new Set(ADMIN_SCOPES) };
}

/** The caller adminAccess let in (a handler behind it). */
export function adminOf(ctx: AppContext): AdminCaller {
  const a = (ctx.state as AdminState).admin;
  if (a === undefined) throw new AppError('AUTHENTICATION_FAILED');
  return a;
}

/** What an admin route's audit records say about the request: who, request id, IP group. */
export function auditContext(services: Pick<Services, 'limits'>, ctx: AppContext): { actor: AdminCaller['actor']; requestId: string; ipGroup: string } {
  return { actor: adminOf(ctx).actor, ...requestMeta(ctx, services) };
}
