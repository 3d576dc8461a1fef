import type { Sizes } from './options.js';
import { emojiFor, evolutionBody, pinFor, Sequence, signWebhook } from './payloads.js';
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
export function webhookRequest(ctx: BenchContext, n: number): RequestSpec {
  const { body, headers } = signWebhook(evolutionBody(n, emojiFor(n)), ctx.stack.webhookSecret);
  return { method: 'POST', path: '/messaging-endpoint', body, headers };
}

/** POST /register-pin for sequence number n (PIN pinFor(n), emoji string emojiFor(n)). */
export function registerRequest(n: number): RequestSpec {
  return jsonPost('/register-pin', { pin: pinFor(n), emojiString: emojiFor(n) });
}

export function jsonPost(path: string, body: unknown): RequestSpec {
  return { method: 'POST', path, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
}
