import { jsonPost, registerRequest, webhookRequest, type BenchContext } from '../context.js';
import { blast, isOk, runAll, type BlastResult, type RequestSpec } from '../load.js';
import { pinFor } from '../payloads.js';
import { sleep } from '../stats.js';

/**
 * The client-facing endpoints under closed-loop load on one web node: register-pin (every
 * request a new PIN and emoji string), check-login (polling pending PINs, as apps do), profile
 * (with access tokens of real logins).
 */
export interface EndpointFigures {
  registerPin: BlastResult;
  checkLogin: BlastResult;
  profile: BlastResult;
}

const POOL = 200;

export async function endpoints(ctx: BenchContext): Promise<EndpointFigures> {
  const { stack, sizes, seq } = ctx;
  if (!stack.worker) await stack.startWorker();
  const url = stack.webs[0]!.url;
  const load = { connections: sizes.connections, seconds: sizes.endpointSeconds };

  ctx.log(`endpoints: register-pin, check-login, profile, ${sizes.endpointSeconds} s each`);
  const registerPin = await blast(url, () => registerRequest(seq.take()), load);

  const pending = Array.from({ length: POOL }, () => seq.take());
  await runAll(POOL, 32, (i) => ({ url, spec: registerRequest(pending[i]!) }));
  let c = 0;
  const checkLogin = await blast(url, () => jsonPost('/check-login', { pin: pinFor(pending[c++ % POOL]!) }), load);

  const tokens = await loginTokens(ctx, url, 50);
  let p = 0;
  const profileRequest = (): RequestSpec => ({ method: 'GET', path: '/profile', headers: { authorization: `Bearer ${tokens[p++ % tokens.length]}` } });
  const profile = await blast(url, profileRequest, load);
  return { registerPin, checkLogin, profile };
}

/** Full logins through the webhook and check-login: their access tokens. */
async function loginTokens(ctx: BenchContext, url: string, count: number): Promise<string[]> {
  const ns = Array.from({ length: count }, () => ctx.seq.take());
  await runAll(count, 16, (i) => ({ url, spec: registerRequest(ns[i]!) }));
  await runAll(count, 16, (i) => ({ url, spec: webhookRequest(ctx, ns[i]!) }));
  const tokens: string[] = [];
  let waiting = ns;
  for (let attempt = 0; attempt < 50 && waiting.length > 0; attempt++) {
    const answers = await runAll(waiting.length, 16, (i) => ({ url, spec: jsonPost('/check-login', { pin: pinFor(waiting[i]!) }) }));
    const still: number[] = [];
    answers.forEach((a, i) => {
      const body = isOk(a) ? (JSON.parse(a.body) as { verified?: boolean; token?: string }) : {};
      if (body.verified && body.token) tokens.push(body.token);
      else still.push(waiting[i]!);
    });
    waiting = still;
    if (waiting.length > 0) await sleep(100);
  }
  if (tokens.length === 0) throw new Error('endpoints: no login completed, so /profile cannot be measured');
  return tokens;
}
