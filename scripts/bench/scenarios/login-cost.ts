import type { BenchContext } from '../context.js';
import { isOk, runAll } from '../load.js';
import { queueLogins } from '../logins.js';
import { answerBody, signWebhook } from '../payloads.js';
import { cpuMs, type Child } from '../processes.js';
import { benchRedis, CompletionCounter, QueueProbe, redisCommands, redisCpuMs, timeByScript, type Completion, type ScriptTime } from '../redis.js';
import { round } from '../stats.js';
import { keys } from '../../../src/redis/keys.js';

/**
 * What one login costs, three ways, one worker draining a backlog:
 * - `off`: LOGIN_CONFIRMATION=false, CHAT_REPLIES=false (the throughput curve's settings);
 * - `replies`: confirmation off, the "signed in" chat reply on (production's default);
 * - `confirmed`: LOGIN_CONFIRMATION=true: two chat messages per login, the code (the worker asks
 *   in the chat) and then YES (the worker logs in), each answered in the chat.
 * Each phase is a backlog on the held queue, released once it is posted; the cost is
 * counted until the inbound and outbound queues are empty (replies sent on the `log` channel),
 * so it includes queueing and sending the replies. Redis commands come from INFO commandstats
 * (exact on a private Redis, an upper bound on a shared one).
 */
export type CostMode = 'off' | 'replies' | 'confirmed';

export interface CostPoint {
  mode: CostMode;
  logins: number;
  loggedIn: number;
  /** chat messages per login the worker handled (1, or 2 with confirmation) */
  messagesPerLogin: number;
  /** logins over the summed first-to-last completion spans of the phases */
  perSecond: number;
  cpuPerLogin: number;
  redisCpuPerLogin: number;
  redisCommandsPerLogin: number;
  /** Redis's execution time per login by script (SLOWLOG), µs and calls a login, largest first */
  redisByScript: ScriptTime[];
  /** false when the SLOWLOG filled up during a phase (its figures then miss the earliest calls) */
  redisByScriptComplete: boolean;
}

const ENV: Record<CostMode, Record<string, string>> = {
  off: {},
  // OUTBOUND_PER_SECOND raised: the gateway limit would otherwise spread the replies over minutes
  replies: { CHAT_REPLIES: 'true', OUTBOUND_PER_SECOND: '10000' },
  confirmed: { CHAT_REPLIES: 'true', LOGIN_CONFIRMATION: 'true', OUTBOUND_PER_SECOND: '10000' },
};

interface Phase {
  seconds: number;
  cpu: number;
  redisCpu: number;
  commands: number;
  outcomes: Record<string, number>;
  scripts: ScriptTime[];
  scriptsComplete: boolean;
}

export async function loginCosts(ctx: BenchContext): Promise<CostPoint[]> {
  const points: CostPoint[] = [];
  for (const mode of ['off', 'replies', 'confirmed'] as const) {
    const p = await loginCost(ctx, mode);
    points.push(p);
    ctx.log(`login cost (${mode}): ${p.perSecond} logins/s, ${p.cpuPerLogin} ms worker CPU, ${p.redisCommandsPerLogin} Redis commands a login`);
  }
  return points;
}

async function loginCost(ctx: BenchContext, mode: CostMode): Promise<CostPoint> {
  const { stack, sizes } = ctx;
  await stack.stopWorkers();
  const [worker] = await stack.startWorkers(1, ENV[mode]);
  const outbound = new QueueProbe('outbound', keys(stack.prefix).queuePrefix('outbound'));
  const redis = benchRedis();
  try {
    // a new process's first logins pay for its compiler's warm-up: a round of its own, not counted,
    // which times Redis's scripts (SLOWLOG logging every command would weigh on the counted round)
    const warm = await logins(ctx, mode, worker!, outbound, redis, sizes.costWarmupLogins, true);
    const point = await logins(ctx, mode, worker!, outbound, redis, sizes.costLogins, false);
    return { ...point, redisByScript: warm.redisByScript, redisByScriptComplete: warm.redisByScriptComplete };
  } finally {
    redis.disconnect();
    await outbound.close();
    await stack.stopWorkers();
  }
}

/** n logins the mode's way, through one worker: what they cost. */
async function logins(
  ctx: BenchContext,
  mode: CostMode,
  worker: Child,
  outbound: QueueProbe,
  redis: ReturnType<typeof benchRedis>,
  n: number,
  /** Redis's time per script read from SLOWLOG (else redisByScript is empty) */
  timed: boolean,
): Promise<CostPoint> {
  const { stack } = ctx;
  const first = await phase(ctx, worker, outbound, redis, timed, async () => (await queueLogins(ctx, n)).ns);
  const phases = [first.phase];
  if (mode === 'confirmed') {
    const ns = first.ns;
    const urls = stack.urls;
    const yes = await phase(ctx, worker, outbound, redis, timed, async () => {
      const answers = await runAll(ns.length, 32, (i) => {
        const { body, headers } = signWebhook(answerBody(ns[i]!), stack.webhookSecret);
        return { url: urls[i % urls.length]!, spec: { method: 'POST', path: '/messaging-endpoint', body, headers } };
      });
      if (answers.filter(isOk).length !== ns.length) ctx.log(`login cost: only ${answers.filter(isOk).length} of ${ns.length} answers accepted`);
      return ns;
    });
    phases.push(yes.phase);
  }
  const sum = (f: (p: Phase) => number): number => phases.reduce((a, p) => a + f(p), 0);
  const loggedIn = phases[phases.length - 1]!.outcomes['logged-in'] ?? 0;
  const per = (v: number): number => round(v / Math.max(1, loggedIn), 3);
  return {
    mode,
    logins: n,
    loggedIn,
    messagesPerLogin: phases.length,
    perSecond: round(loggedIn / sum((p) => p.seconds)),
    cpuPerLogin: per(sum((p) => p.cpu)),
    redisCpuPerLogin: per(sum((p) => p.redisCpu)),
    redisCommandsPerLogin: round(sum((p) => p.commands) / Math.max(1, loggedIn), 1),
    redisByScript: perLogin(
      phases.flatMap((p) => p.scripts),
      loggedIn,
    ),
    redisByScriptComplete: phases.every((p) => p.scriptsComplete),
  };
}

/** Posts a batch on the held queue, releases it, and measures until both queues are empty. */
async function phase(
  ctx: BenchContext,
  worker: Child,
  outbound: QueueProbe,
  redis: ReturnType<typeof benchRedis>,
  timed: boolean,
  post: () => Promise<number[]>,
): Promise<{ ns: number[]; phase: Phase }> {
  const { stack, sizes } = ctx;
  await stack.inbound.pause();
  let ns: number[];
  try {
    ns = await post();
  } catch (err) {
    await stack.inbound.resume();
    throw err;
  }
  const counter = new CompletionCounter('inbound', stack.inboundPrefix);
  await counter.start();
  const cpu0 = cpuMs(worker.pid);
  const [redisCpu0, commands0] = [await redisCpuMs(redis), await redisCommands(redis)];
  const drain = async (): Promise<Completion> => {
    await stack.inbound.resume();
    const finished = await counter.waitFor(ns.length, sizes.drainTimeoutMs);
    await counter.close();
    await outbound.drained(sizes.drainTimeoutMs);
    return finished;
  };
  // SLOWLOG also logs each command a script runs (and every other tenant's): a confirmed login is ~260 in all
  const {
    result: done,
    times,
    complete,
  } = timed
    ? await timeByScript(redis, stack.prefix, Math.min(250_000, Math.max(100_000, ns.length * 250)), drain)
    : { result: await drain(), times: [], complete: true };
  const phase: Phase = {
    seconds: (done.lastAt - done.firstAt) / 1000,
    cpu: cpuMs(worker.pid) - cpu0,
    redisCpu: (await redisCpuMs(redis)) - redisCpu0,
    commands: (await redisCommands(redis)) - commands0,
    outcomes: done.outcomes,
    scripts: times,
    scriptsComplete: complete,
  };
  return { ns, phase };
}

/** The phases' script times summed by name, per login (µs to 0.1, calls to 0.01), largest first. */
function perLogin(times: readonly ScriptTime[], logins: number): ScriptTime[] {
  const by = new Map<string, ScriptTime>();
  for (const t of times) {
    const sum = by.get(t.name) ?? { name: t.name, calls: 0, us: 0 };
    sum.calls += t.calls;
    sum.us += t.us;
    by.set(t.name, sum);
  }
  const n = Math.max(1, logins);
  return [...by.values()].map((t) => ({ name: t.name, calls: round(t.calls / n, 2), us: round(t.us / n, 1) })).sort((a, b) => b.us - a.us);
}
