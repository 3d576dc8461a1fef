import type { Services } from '../../services.js';
import type { AppContext, AppRouter } from '../context.js';

/** Public keys may be cached this long: a new key is published at least this long before it signs. */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * GET /.well-known/jwks.json: the public keys tokens are verified with (the active key first,
 * then the verify-only ones), so any service can check a token offline without a secret.
 */
export function registerJwksRoute(router: AppRouter, services: Services): void {
  router.get('/.well-known/jwks.json', (ctx) => sendJwks(ctx, services));
}

/** The JWKS answer, also served as the OpenID provider's jwks_uri. */
export function sendJwks(ctx: Pick<AppContext, 'set' | 'type' | 'body'>, services: Services): void {
  ctx.set('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-while-revalidate=${JWKS_MAX_AGE_SECONDS}`);
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.type = 'application/jwk-set+json';
  ctx.body = services.tokens.keys.jwks();
}
