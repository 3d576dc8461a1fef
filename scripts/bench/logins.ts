import { registerRequest, webhookRequest, type BenchContext } from './context.js';
import { isOk, runAll } from './load.js';
import { phoneFor } from './payloads.js';

/**
 * N logins set up over HTTP as an app and a gateway make them: N registrations (register-pin,
 * spread over the web nodes), then the chat message of each (signed webhooks, each to the next
 * node). Who processes them (a running worker, or workers started later) is the caller's choice.
 */
export interface QueuedLogins {
  /** the sequence numbers (PIN pinFor(n), emoji string emojiFor(n), phone phoneFor(n)) */
  ns: number[];
  registered: number;
  accepted: number;
}

export async function queueLogins(ctx: BenchContext, n: number, concurrency = 32, people?: readonly number[]): Promise<QueuedLogins> {
  const urls = ctx.stack.urls;
  const ns = Array.from({ length: n }, () => ctx.seq.take());
  // `people`: login i comes from the phone of people[i] (someone who signed in before), not a new one
  const phone = (i: number): string => phoneFor(people?.[i] ?? ns[i]!);
  const regs = await runAll(n, concurrency, (i) => ({ url: urls[i % urls.length]!, spec: registerRequest(ns[i]!) }));
  const hooks = await runAll(n, concurrency, (i) => ({ url: urls[(i + 1) % urls.length]!, spec: webhookRequest(ctx, ns[i]!, phone(i)) }));
  const registered = regs.filter(isOk).length;
  const accepted = hooks.filter(isOk).length;
  if (registered !== n || accepted !== n) ctx.log(`only ${registered} registered, ${accepted} webhooks accepted of ${n}`);
  return { ns, registered, accepted };
}
