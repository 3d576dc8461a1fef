import { paired, type Paired } from '../baseline.js';
import { jsonPost, pairFrom, profileRequest, refreshRequest, registerRequest, type BenchContext, type TokenPair } from '../context.js';
import { runAll, type RequestSpec } from '../load.js';
import { queueLogins } from '../logins.js';
import { pinFor } from '../payloads.js';
import { CompletionCounter } from '../redis.js';

/**
 * The client-facing endpoints on one web node, each paired with the bare Koa baseline answering
 * requests of the same shape (alternating rounds, baseline.ts): register-pin (every request a new
 * PIN, without an emoji string: the server draws one, as production's EMOJI_CHOICE=server does
 * for every registration), check-login while pending (polling 200 PINs round robin, as apps do),
 * check-login once verified (each request collects one real login: rounds of a set count, after
 * a warm-up round of the same count, whose answers give the token pairs), profile (the access
 * tokens of `sessionPool` of those logins, polled in turn) and refresh-token (the same sessions;
 * each answer's new pair goes back in the pool: a refresh token is only ever presented once).
 */
export interface EndpointFigures {
  registerPin: Paired;
  checkPending: Paired;
  checkVerified: Paired;
  profile: Paired;
  refresh: Paired;
}

const POOL = 200;

export async function endpoints(ctx: BenchContext): Promise<EndpointFigures> {
  const { stack, sizes, seq } = ctx;
  if (!stack.worker) await stack.startWorker();
  const web = stack.webs[0]!;
  const baseline = await stack.baseline();
  const common = {
    baseline,
    service: web,
    rounds: sizes.endpointRounds,
    seconds: sizes.endpointSeconds,
    warmupSeconds: sizes.warmupSeconds,
    connections: sizes.connections,
  };
  const register = (): RequestSpec => jsonPost('/register-pin', { pin: pinFor(seq.take()) });

  ctx.log(`endpoints: ${sizes.endpointRounds} × (baseline, service) of ${sizes.endpointSeconds} s for each endpoint`);
  const registerPin = await paired({ ...common, baselineRequest: register, serviceRequest: register });

  const pending = Array.from({ length: POOL }, () => seq.take());
  await runAll(POOL, 32, (i) => ({ url: web.url, spec: registerRequest(pending[i]!) }));
  let c = 0;
  const check = (): RequestSpec => jsonPost('/check-login', { pin: pinFor(pending[c++ % POOL]!) });
  const checkPending = await paired({ ...common, baselineRequest: check, serviceRequest: check });

  // real logins through the worker, each collected once by the verified run (warm-up included)
  const perRound = sizes.verifiedPerRound;
  const n = (sizes.endpointRounds + 1) * perRound;
  const counter = new CompletionCounter('inbound', stack.inboundPrefix);
  await counter.start();
  const { ns } = await queueLogins(ctx, n);
  const done = await counter.waitFor(n, sizes.drainTimeoutMs);
  await counter.close();
  if ((done.outcomes['logged-in'] ?? 0) < n) ctx.log(`endpoints: only ${done.outcomes['logged-in'] ?? 0} of ${n} logins completed`);
  let v = 0;
  const pairs: TokenPair[] = [];
  const collect = (): RequestSpec => jsonPost('/check-login', { pin: pinFor(ns[v++ % ns.length]!) });
  const checkVerified = await paired({
    ...common,
    warmupAmount: perRound,
    amount: perRound,
    baselineRequest: check,
    serviceRequest: collect,
    // the warm-up's answers give the pairs profile and refresh-token need
    bodiesFromWarmupOnly: true,
    onServiceBody: (status, body) => {
      const p = pairFrom(status, body);
      if (p) pairs.push(p);
    },
  });
  if (pairs.length < 2 * sizes.connections) throw new Error(`endpoints: only ${pairs.length} logins collected, too few for profile and refresh-token`);
  // the collected sessions beyond the pool stay open but idle, as most of a deployment's do
  pairs.splice(sizes.sessionPool);

  let p = 0;
  const tokens = pairs.map((t) => t.token);
  const profileNext = (): RequestSpec => profileRequest(tokens[p++ % tokens.length]!);
  const profile = await paired({ ...common, baselineRequest: profileNext, serviceRequest: profileNext });

  // a pair leaves the pool when sent and its successor comes back with the answer
  const fixed = pairs[0]!;
  const pool = pairs.slice(1);
  const refresh = await paired({
    ...common,
    baselineRequest: () => refreshRequest(fixed),
    serviceRequest: () => refreshRequest(pool.shift() ?? { token: 'pool-empty', refreshToken: 'pool-empty' }),
    onServiceBody: (status, body) => {
      const next = pairFrom(status, body);
      if (next) pool.push(next);
    },
  });
  return { registerPin, checkPending, checkVerified, profile, refresh };
}
