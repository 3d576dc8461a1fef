import type { Sizes } from './options.js';
import { emojiFor, evolutionBody, phoneFor, pinFor, type Sequence, signWebhook } from './payloads.js';
import type { RequestSpec } from './load.js';
import type { Stack } from './stack.js';

/** What every scenario gets: the running stack, the sizes, and request builders. */
export interface BenchContext {
  stack: Stack;
  sizes: Sizes;
  /** one sequence for the whole run: every registration and message is unique */
  seq: Sequence;
  log(message: string): void;
}

/** A signed Evolution webhook for sequence number n (the message quotes emojiFor(n)). */
export function webhookRequest(ctx: BenchContext, n: number, phone = phoneFor(n)): RequestSpec {
  const { body, headers } = signWebhook(evolutionBody(n, emojiFor(n), phone), ctx.stack.webhookSecret);
  return { method: 'POST', path: '/messaging-endpoint', body, headers };
}

/** POST /register-pin for sequence number n (PIN pinFor(n), emoji string emojiFor(n)). */
export function registerRequest(n: number): RequestSpec {
  return jsonPost('/register-pin', { pin: pinFor(n), emojiString: emojiFor(n) });
}

export function jsonPost(path: string, body: unknown): RequestSpec {
  return { method: 'POST', path, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
}

/** The pair a login or a refresh answers with. */
export interface TokenPair {
  token: string;
  refreshToken: string;
}

/** The pair in a 200 answer's body (check-login once verified, refresh-token); null otherwise. */
export function pairFrom(status: number, body: string): TokenPair | null {
  if (status !== 200) return null;
  const b = JSON.parse(body) as Partial<TokenPair>;
  return typeof b.token === 'string' && typeof b.refreshToken === 'string' ? { token: b.token, refreshToken: b.refreshToken } : null;
}

/** POST /refresh-token `{refreshToken}` form, the pair's access token as the bearer. */
export const refreshRequest = (p: TokenPair): RequestSpec => ({
  ...jsonPost('/refresh-token', { refreshToken: p.refreshToken }),
  headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}` },
});

export const profileRequest = (token: string): RequestSpec => ({ method: 'GET', path: '/profile', headers: { authorization: `Bearer ${token}` } });
