import { parseBearer } from '../auth/bearer.js';
import { originOf } from '../registrations/origin.js';
import type { TokenClaims } from '../auth/tokens.js';
import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Services } from '../services.js';
import { validate } from '../validation/validate.js';
import { IdempotencyKeys } from './idempotency.js';
import { JsonText } from './json-text.js';

/**
 * The one implementation of the endpoints an app polls (register-pin, check-login, profile,
 * refresh-token), served by the lean handler in front of Koa (fast-api.ts) and by the Koa routes
 * (routes/*.ts) alike. Each takes what it needs of the request, already read, and returns the
 * 200 body or throws an AppError (the error body is written by whichever server answers).
 */
export interface ApiCall {
  /** the JSON body, read and parsed when first asked for (a refused token answers before it) */
  body(): Promise<unknown>;
  /** the client's address (the last X-Forwarded-For hop behind a trusted proxy) */
  ip: string;
  /** '' when absent */
  userAgent: string;
  /** the Authorization header, '' when absent */
  authorization: string;
  /** the Idempotency-Key header, '' when absent */
  idempotencyKey: string;
  /** the request's logger (request id stamped), made on first use */
  log(): Logger;
  /** an info line through log(); nothing is made when info lines are off (the hot paths' logs) */
  info(message: string, fields: Record<string, unknown>): void;
  /** set once the access token is verified: the access line names the user */
  claims?: TokenClaims;
}

export type ApiHandler = (call: ApiCall) => Promise<object>;

export type ApiRoute = 'registerPin' | 'checkLogin' | 'profile' | 'refreshToken';

export function apiHandlers(services: Services): Record<ApiRoute, ApiHandler> {
  const { registrations, sessions, tokens } = services;
  const bearer = (call: ApiCall): string | undefined => parseBearer(call.authorization) ?? undefined;

  return {
    /**
     * POST /register-pin `{pin, emojiString?}` → `{success, message, pinId, expiresIn, emojiString}`
     * (the emoji string to show: the client's own, or the one the server drew). Budgets and the
     * no-oracle rules live in the registration script (src/redis/scripts/register.lua).
     */
    async registerPin(call) {
      const { pin, emojiString, idempotencyKey } = validate.registerPin(await call.body());
      const key = IdempotencyKeys.parse(call.idempotencyKey) ?? idempotencyKey;
      const reg = await registrations.register(pin, emojiString, { ip: call.ip, via: 'http', origin: originOf(call.userAgent, call.ip) }, key);
      if (!reg.decoy) call.info(reg.created ? 'pin registered' : 'pin re-registered', { pinId: reg.pinId });
      return {
        success: true,
        message: reg.created ? 'PIN registered' : 'PIN already registered',
        pinId: reg.pinId,
        expiresIn: reg.expiresIn,
        emojiString: reg.emojiString,
      };
    },

    /**
     * POST /check-login → pending `{success, verified: false, message}` (plus
     * `awaitingConfirmation: true` while the person is asked in the chat) or verified
     * `{success, verified: true, token, refreshToken, user}` (once); 403 LOGIN_DENIED after a NO.
     * The budgets (per IP group, per PIN, wrong guesses per IP group) are checked and spent by the
     * check script itself: one atomic step, one round trip (this endpoint is polled every second).
     */
    async checkLogin(call) {
      const { pin } = validate.checkLogin(await call.body());
      const outcome = await registrations.check(pin, { ip: call.ip, via: 'http' });
      if (outcome.state === 'pending') return { success: true, verified: false, message: 'Waiting for the chat message' };
      if (outcome.state === 'awaiting') {
        return { success: true, verified: false, awaitingConfirmation: true, message: 'Waiting for the person to confirm in the chat' };
      }
      call.info('login collected', { pinId: outcome.pinId, userId: outcome.userId });
      // the kept result (an object's JSON) is the answer's tail as it is, not parsed and serialised again
      return new JsonText(`{"success":true,"verified":true,${outcome.resultJson.slice(1)}`);
    },

    /** GET /profile → `{success, user: {id, name, surname, phone, roles}}` (an open session's only). */
    async profile(call) {
      const { claims, user } = await sessions.profile(bearer(call));
      call.claims = claims;
      return { success: true, user };
    },

    /**
     * POST /refresh-token, both body forms: `{refreshToken}` rotates that refresh token (reuse
     * closes the session); `{id}` needs an unexpired access token for that user. The access token
     * must be ours, but its expiry is not held against it (it proves who asks).
     */
    async refreshToken(call) {
      const token = bearer(call);
      if (!token) throw new AppError('AUTHENTICATION_FAILED', 'Missing bearer token');
      const claims = tokens.verify(token, 'access', { allowExpired: true, replacing: true });
      call.claims = claims;
      const body = validate.refresh(await call.body());
      const pair =
        body.refreshToken !== undefined ? await sessions.refreshWithToken(claims, body.refreshToken) : await sessions.refreshWithId(claims, body.id!);
      // `{success, token, refreshToken}`: the pair's JSON as the rotation kept it, not parsed and serialised again
      return new JsonText(`{"success":true,${pair.slice(1)}`);
    },
  };
}
