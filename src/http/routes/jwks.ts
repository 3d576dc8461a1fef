import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';

/** Public keys may be cached this long: a new key is published at least this long before it signs. */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * GET /.well-known/jwks.json: the public keys tokens are verified with (the active key first,
 * then the verify-only ones), so any service can check a token offline without a secret.
 */
export function jwks(services: Pick<Services, 'tokens'>) {
  return (ctx: AppContext): void => sendJwks(ctx, services);
}

/** The JWKS answer, also served as the OpenID provider's jwks_uri. */
export function sendJwks(ctx: Pick<AppContext, 'set' | 'type' | 'body'>, services: Pick<Services, 'tokens'>): void {
  ctx.set('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-while-revalidate=${JWKS_MAX_AGE_SECONDS}`);
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.type = 'application/jwk-set+json';
  ctx.body = services.tokens.keys.jwks();
}
