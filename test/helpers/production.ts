import { evolutionJwt } from '../messaging/support.js';
import { sendChat } from './flow.js';

/** Evolution API's `jwt_key` in the production stacks the tests start. */
export const EVOLUTION_JWT_KEY = 'production-evolution-jwt-key-0123456789abcdef';

/**
 * What docs/operations.md sets for production: NODE_ENV=production and the secrets it requires
 * (each at least 32 bytes), with an Evolution gateway's webhook key. Everything else stays at
 * its production default (the server draws emoji strings, PINs need 64 bits, …); start the
 * stack with `defaultLimits: true` to keep the default rate limits too.
 */
export const PRODUCTION_ENV: Record<string, string> = {
  NODE_ENV: 'production',
  JWT_SECRET: 'production-like-jwt-secret-0123456789abcdef0123456789',
  WEBHOOK_JWT_KEY: EVOLUTION_JWT_KEY,
};

/** The chat message as Evolution API posts it, with its JWT. */
export function evolutionChat(base: string, text: string, opts: { phone: string; pushName?: string }) {
  return sendChat(base, text, opts, { authorization: `Bearer ${evolutionJwt(EVOLUTION_JWT_KEY)}` });
}
