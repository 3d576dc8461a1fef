import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuSum, type Compared } from './baseline.js';
import { ceilings, type CryptoCosts } from './ceiling.js';
import type { EndpointFigures } from './scenarios/endpoints.js';
import type { IngestionFigures } from './scenarios/ingestion.js';
import type { LoginFigures } from './scenarios/login.js';
import type { CostMode, CostPoint } from './scenarios/login-cost.js';
import type { ScriptTime } from './redis.js';
import type { MemoryFigures } from './scenarios/memory.js';
import type { PathFigures, PipelineFigures, SustainSide } from './scenarios/pipeline.js';
import type { CpuPerLogin } from './open-loop.js';
import { round } from './stats.js';

/**
 * The figures as tables (stdout: the figures beside their targets, then one table per curve)
 * and as JSON (bench/results/latest.json); html.ts draws the same curves.
 */
export interface Figures {
  ingestion?: IngestionFigures;
  login?: LoginFigures;
  /** the service beside the simplest pipeline, alternately: latency at 100 and 200/s, the rate one worker sustains */
  pipeline?: PipelineFigures;
  endpoints?: EndpointFigures;
  memory?: MemoryFigures;
  /** one worker: what a login costs with confirmation off, with the reply, with confirmation on */
  cost?: CostPoint[];
  /** the cryptography each request must do, timed after the rounds (the ceilings' input: ceiling.ts) */
  crypto?: CryptoCosts;
}

export interface Row {
  section: string;
  figure: string;
  value: number | null;
  unit: string;
  /** e.g. '≥ 0.8'; absent for figures shown for context */
  target?: string;
  pass?: boolean;
}

/** The targets (2-core machine, load generator included; ratios to bare Koa in the same run). */
export const TARGETS = {
  webhookRatio: 0.8,
  endpointRatio: 0.5,
  endpointP99Ratio: 2,
  loginP50Ms: 5,
  loginP99Ms: 15,
  /** the fixed rate the p50/p99 targets are read at */
  loginRate: 500,
  workerLoginsPerSecond: 4000,
  /** service ÷ simplest pipeline, webhook → auth-success, at each rate: p50 and p99 at most */
  pipelineLatency: { 100: { p50: 1.3, p99: 1.5 }, 200: { p50: 2, p99: 2 } } as Record<number, { p50: number; p99: number }>,
  /** service ÷ simplest pipeline, the rate one worker sustains: at least */
  pipelineSustained: 0.8,
  bytesPerItem: 1024,
  rssMB: 200,
  rssSockets: 10_000,
} as const;

const at = (v: number | undefined | null): number | null => (v === undefined || v === null || Number.isNaN(v) ? null : v);

function target(value: number | null, op: '≥' | '≤' | '<' | '=', limit: number): Pick<Row, 'target' | 'pass'> {
  const pass = value === null ? false : op === '≥' ? value >= limit : op === '≤' ? value <= limit : op === '<' ? value < limit : value === limit;
  return { target: `${op} ${limit.toLocaleString('en')}`, pass };
}

/** The req/s ratio an endpoint of the tables is held to. */
const ratioTarget = (name: string): number => (name === 'webhook ingestion' ? TARGETS.webhookRatio : TARGETS.endpointRatio);

/** The endpoints in the order of the table: name, figures. */
export function endpointList(f: Figures): Array<[string, Compared]> {
  const e = f.endpoints;
  const list: Array<[string, Compared | undefined]> = [
    ['webhook ingestion', f.ingestion],
    ['register-pin', e?.registerPin],
    ['check-login (pending)', e?.checkPending],
    ['check-login (verified)', e?.checkVerified],
    ['profile', e?.profile],
    ['refresh-token', e?.refresh],
  ];
  return list.filter((x): x is [string, Compared] => x[1] !== undefined);
}

export function rows(f: Figures): Row[] {
  const out: Row[] = [];
  const add = (section: string, figure: string, value: number | undefined | null, unit: string, t?: Pick<Row, 'target' | 'pass'>): void => {
    out.push({ section, figure, value: at(value), unit, ...(t ?? {}) });
  };
  if (f.ingestion) {
    const i = f.ingestion;
    const s = 'webhook ingestion';
    add(s, 'bare Koa baseline (median of rounds)', i.baseline.rps, `req/s, p50 ${i.baseline.p50} ms, p99 ${i.baseline.p99} ms`);
    add(s, 'service, one web node, workers stopped', i.service.rps, `req/s, p50 ${i.service.p50} ms, p99 ${i.service.p99} ms`);
    add(s, 'service / baseline (median of rounds)', i.ratio, `(rounds ${range(i.ratioRange)})`, target(i.ratio, '≥', TARGETS.webhookRatio));
    add(s, 'CPU per request: baseline / web node', i.cpuPerRequest.baseline, `ms / ${i.cpuPerRequest.web} ms`);
    add(s, 'webhooks accepted (2xx)', i.accepted, `(${i.refused} refused)`);
    add(
      s,
      'backlog drained by one worker',
      i.drain.jobsPerSecond,
      `jobs/s (${i.drain.jobs} jobs in ${i.drain.seconds} s, ${i.cpuPerRequest.workerPerJob} ms CPU each)`,
    );
    add(s, 'webhooks lost (accepted, never completed)', i.lost, '', target(i.lost, '=', 0));
    add(s, 'jobs completed twice / failed', i.repeats, `/ ${i.failed}`, target(i.repeats + i.failed, '=', 0));
  }
  if (f.login) {
    const s = 'end-to-end login';
    const l = f.login.latency.find((p) => p.rate === TARGETS.loginRate);
    if (l) {
      add(
        s,
        `webhook → auth-success p50 at ${l.rate}/s`,
        l.p50,
        `ms (a Redis round trip meanwhile: p50 ${l.redisRtt.p50} ms)`,
        target(l.p50, '<', TARGETS.loginP50Ms),
      );
      add(s, `webhook → auth-success p99 at ${l.rate}/s`, l.p99, `ms (max ${l.max} ms)`, target(l.p99, '<', TARGETS.loginP99Ms));
    }
    add(s, 'highest offered rate served (not saturated)', f.login.sustainedRate, 'logins/s');
    const missing = f.login.latency.filter((p) => !p.saturated).reduce((a, p) => a + p.missing + p.webhookFailures, 0);
    add(s, 'auth-success missing / refused below saturation', missing, '', target(missing, '=', 0));
    const one = f.login.workers.find((w) => w.workers === 1);
    if (one) {
      const runs = one.runs.length > 1 ? `, median of ${one.runs.map(n).join(' / ')}` : '';
      add(
        s,
        'logins/s, one worker (backlog)',
        one.perSecond,
        `(${one.loggedIn}/${one.logins} in ${one.seconds} s${runs})`,
        target(one.perSecond, '≥', TARGETS.workerLoginsPerSecond),
      );
      add(s, 'CPU per login: worker / Redis', one.cpuPerLogin, `ms / ${one.redisCpuPerLogin} ms`);
      add(s, 'Redis commands per login (commandstats)', one.redisCommandsPerLogin, '');
    }
    const lost = f.login.workers.reduce((a, w) => a + w.lost, 0);
    add(s, 'logins lost in the worker runs', lost, '', target(lost, '=', 0));
  }
  if (f.pipeline) {
    const s = 'beside the simplest pipeline';
    for (const c of f.pipeline.rates) {
      const t = TARGETS.pipelineLatency[c.rate];
      const rtt = `; Redis round trip p50 ${c.service.redisRtt.p50} / ${c.pipeline.redisRtt.p50} ms`;
      add(
        s,
        `webhook → auth-success p50 at ${c.rate}/s, service / pipeline`,
        c.p50Ratio,
        `(${c.service.p50} / ${c.pipeline.p50} ms${rtt})`,
        t && target(c.p50Ratio, '≤', t.p50),
      );
      add(
        s,
        `webhook → auth-success p99 at ${c.rate}/s, service / pipeline`,
        c.p99Ratio,
        `(${c.service.p99} / ${c.pipeline.p99} ms)`,
        t && target(c.p99Ratio, '≤', t.p99),
      );
    }
    // the steadiest figure of the comparison on a busy machine: what a login costs each worker
    for (const c of f.pipeline.rates) {
      const cpu = c.pipeline.workerCpuPerLogin > 0 ? round(c.service.workerCpuPerLogin / c.pipeline.workerCpuPerLogin, 2) : null;
      add(s, `worker CPU per login at ${c.rate}/s, service / pipeline`, cpu, `(${c.service.workerCpuPerLogin} / ${c.pipeline.workerCpuPerLogin} ms)`);
    }
    // where the two cores go: every process's CPU a login, the sum bounding the rate they allow
    for (const c of f.pipeline.rates) {
      const sum = c.pipeline.cpuPerLogin.sum > 0 ? round(c.service.cpuPerLogin.sum / c.pipeline.cpuPerLogin.sum, 2) : null;
      add(
        s,
        `CPU of every process per login at ${c.rate}/s, service / pipeline`,
        sum,
        `(${CPU_PARTS}: ${cpuSplit(c.service.cpuPerLogin)} against ${cpuSplit(c.pipeline.cpuPerLogin)} ms)`,
      );
    }
    const { service, pipeline, ratio, p99BoundMs } = f.pipeline.sustained;
    add(
      s,
      'logins/s one worker sustains, service / pipeline',
      ratio,
      `(${sustainedText(service)} / ${sustainedText(pipeline)} logins/s: p99 ≤ ${p99BoundMs} ms, none lost)`,
      target(ratio, '≥', TARGETS.pipelineSustained),
    );
    const lost = f.pipeline.rates.reduce((a, c) => a + c.service.missing + c.service.webhookFailures, 0);
    add(s, 'service logins lost or refused at 100 and 200/s', lost, '', target(lost, '=', 0));
  }
  if (f.cost) {
    const s = 'cost per login';
    const confirmed = f.cost.find((c) => c.mode === 'confirmed');
    if (confirmed) {
      add(
        s,
        'confirmed logins/s, one worker (code + YES)',
        confirmed.perSecond,
        `(${confirmed.cpuPerLogin} ms worker CPU, ${confirmed.redisCommandsPerLogin} Redis commands a login)`,
      );
    }
    const lost = f.cost.reduce((a, c) => a + c.logins - c.loggedIn, 0);
    add(s, 'logins lost in the cost runs', lost, '', target(lost, '=', 0));
  }
  for (const [name, p] of endpointList(f)) {
    if (name === 'webhook ingestion') continue;
    const s = 'endpoints (one web node)';
    add(
      s,
      `${name} / baseline`,
      p.ratio,
      `(${p.service.rps.toLocaleString('en')} / ${p.baseline.rps.toLocaleString('en')} req/s, rounds ${range(p.ratioRange)}${p.service.failed ? `, ${p.service.failed} failed` : ''})`,
      target(p.ratio, '≥', TARGETS.endpointRatio),
    );
    add(s, `${name} p99 / baseline p99`, p.p99Ratio, `(${p.service.p99} / ${p.baseline.p99} ms)`, target(p.p99Ratio, '≤', TARGETS.endpointP99Ratio));
  }
  if (f.memory) {
    const m = f.memory;
    const s = 'memory';
    const last = m.registrations[m.registrations.length - 1];
    if (last) {
      // the whole server's figure: keys of others (an earlier run's expiring replies) can make it fall
      const fell = last.bytesPerRegistration < 0;
      add(
        s,
        `Redis bytes per registration (INFO, ${last.registrations.toLocaleString('en')})`,
        fell ? null : last.bytesPerRegistration,
        fell ? `B (not measured: the server's memory fell by ${-last.bytesPerRegistration} B a registration, other keys went meanwhile)` : 'B',
        target(fell ? null : last.bytesPerRegistration, '≤', TARGETS.bytesPerItem),
      );
      add(
        s,
        'Redis bytes per registration (own keys)',
        last.prefixBytesPerRegistration,
        'B',
        target(last.prefixBytesPerRegistration, '≤', TARGETS.bytesPerItem),
      );
    }
    add(
      s,
      `Redis bytes per session (own keys, ${m.sessions.logins} sign-ins of known people)`,
      m.sessions.bytesPerSession,
      'B',
      target(m.sessions.bytesPerSession, '≤', TARGETS.bytesPerItem),
    );
    add(s, 'Redis bytes per person besides (account, phone, directory, audit of the identifier linked)', m.sessions.bytesPerPerson, 'B');
    const most = m.sockets[m.sockets.length - 1];
    if (most) add(s, `web-1 RSS, ${most.sockets.toLocaleString('en')} sockets just connected`, most.rssMB, `MB (at start ${m.rss.web1Start} MB)`);
    const idle = m.idle;
    if (idle) {
      const t = idle.sockets >= TARGETS.rssSockets ? target(idle.medianMB, '≤', TARGETS.rssMB) : undefined;
      add(
        s,
        `web-1 RSS, ${idle.sockets.toLocaleString('en')} idle sockets (median of ${idle.seconds} s)`,
        idle.medianMB,
        `MB (${idle.minMB}–${idle.maxMB} MB)`,
        t,
      );
    }
    add(s, 'web-2 / worker RSS', m.rss.web2, `MB / ${m.rss.worker ?? '—'} MB`);
  }
  return out;
}

/** A step's CPU a login by process: "0.3 / 0.1 / 0.2 / 0.3 / 0.1 = 1" */
const cpuSplit = (c: CpuPerLogin): string => `${[c.worker, c.socketNode, c.webhookNode, c.redis, c.load].map(n).join(' / ')} = ${n(c.sum)}`;
const CPU_PARTS = 'worker / socket node / webhook node / Redis / load = sum';

/** A sustained rate: "≥ 6,400" when the search ended still sustained, "—" when none was. */
const sustainedText = (side: SustainSide): string => (side.rate === null ? '—' : `${side.capped ? '≥ ' : ''}${side.rate.toLocaleString('en')}`);

/** A plain text table (columns padded, numbers as given). */
export function textTable(head: string[], cells: string[][]): string {
  const widths = head.map((h, c) => Math.max(h.length, ...cells.map((row) => [...(row[c] ?? '')].length)));
  const line = (row: string[]): string =>
    row
      .map((cell, c) => cell + ' '.repeat(widths[c]! - [...cell].length))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

const n = (v: number | null | undefined): string => (v === null || v === undefined || Number.isNaN(v) ? '—' : v.toLocaleString('en'));
/** the rounds' lowest and highest ratio */
const range = ([lo, hi]: [number, number]): string => (lo === hi ? n(lo) : `${n(lo)}–${n(hi)}`);

export function table(all: Row[]): string {
  return textTable(
    ['section', 'figure', 'value', 'target', ''],
    all.map((r) => [r.section, r.figure, `${n(r.value)} ${r.unit}`.trim(), r.target ?? '', r.pass === undefined ? '' : r.pass ? 'met' : 'not met']),
  );
}

/** Redis's time per login by script, one column a cost mode: where Redis's share of a login goes. */
function scriptTable(cost: readonly CostPoint[]): string {
  const names = [...new Set(cost.flatMap((c) => c.redisByScript.map((t) => t.name)))];
  const at = (c: CostPoint, name: string): ScriptTime | undefined => c.redisByScript.find((t) => t.name === name);
  const first = cost[0];
  if (first) names.sort((a, b) => (at(first, b)?.us ?? 0) - (at(first, a)?.us ?? 0));
  const partial = cost.some((c) => !c.redisByScriptComplete) ? ' (SLOWLOG filled up: the earliest calls are missing)' : '';
  const cell = (t: ScriptTime | undefined): string => (t ? `${n(t.us)} (${n(t.calls)})` : '—');
  const total = (c: CostPoint): number =>
    round(
      c.redisByScript.reduce((sum, t) => sum + t.us, 0),
      1,
    );
  return (
    `Redis time per login by script, µs (calls a login), SLOWLOG during each worker's uncounted warm-up round${partial}\n` +
    textTable(
      ['script', ...cost.map((c) => COST_LABEL[c.mode])],
      [...names.map((name) => [name, ...cost.map((c) => cell(at(c, name)))]), ['all', ...cost.map((c) => n(total(c)))]],
    )
  );
}

const COST_LABEL: Record<CostMode, string> = {
  off: 'confirmation off, no reply',
  replies: 'confirmation off, "signed in" reply',
  confirmed: 'confirmation on',
};

/** One table per curve, for the terminal (the HTML report draws them). */
export function curveTables(f: Figures): string[] {
  const out: string[] = [];
  const eps = endpointList(f);
  if (eps.length) {
    out.push(
      'Throughput per endpoint, one web node, beside bare Koa (medians of the rounds)\n' +
        textTable(
          [
            'endpoint',
            'req/s',
            'bare Koa',
            'ratio',
            'rounds',
            'target',
            'p99 ms',
            'bare Koa p99',
            'p99 ratio',
            'target',
            'CPU ms/req',
            'bare Koa',
            'CPU ratio',
          ],
          eps.map(([name, p]) => [
            name,
            n(p.service.rps),
            n(p.baseline.rps),
            n(p.ratio),
            range(p.ratioRange),
            `≥ ${ratioTarget(name)}`,
            n(p.service.p99),
            n(p.baseline.p99),
            n(p.p99Ratio),
            name === 'webhook ingestion' ? '' : `≤ ${TARGETS.endpointP99Ratio}`,
            n(p.service.cpuPerRequest),
            n(p.baseline.cpuPerRequest),
            n(p.cpuRatio),
          ]),
        ),
    );
    out.push(
      'CPU ms per request of every process on the two cores (the load generator parses each answer)\n' +
        textTable(
          ['endpoint', 'web node', 'Redis', 'load generator', 'sum', 'bare Koa', 'its load generator', 'sum', 'sum ratio', '1 ÷ req/s ratio'],
          eps.map(([name, p]) => {
            const s = p.service;
            const b = p.baseline;
            return [
              name,
              n(s.cpuPerRequest),
              n(s.redisCpuPerRequest),
              n(s.loadCpuPerRequest),
              n(round(cpuSum(s), 3)),
              n(b.cpuPerRequest),
              n(b.loadCpuPerRequest),
              n(round(cpuSum(b), 3)),
              n(p.sumCpuRatio),
              n(p.ratio > 0 ? round(1 / p.ratio, 2) : null),
            ];
          }),
        ),
    );
    const tops = ceilings(eps, f.crypto);
    if (tops.length) {
      out.push(
        "Ceiling: the best req/s ratio each could reach here (bare Koa's web CPU + the cryptography it must do + Redis as measured + the baseline's load generator)\n" +
          textTable(
            ['endpoint', 'must compute', 'crypto ms', 'least sum ms', 'bare Koa sum ms', 'ceiling', 'target', 'measured'],
            tops.map((c) => [
              c.endpoint,
              c.crypto,
              n(c.cryptoMs),
              n(c.floorSumMs),
              n(c.baselineSumMs),
              n(c.ceiling),
              `≥ ${ratioTarget(c.endpoint)}`,
              n(c.ratio),
            ]),
          ),
      );
    }
  }
  if (f.login) {
    out.push(
      'Logins/s against worker processes (one Redis, backlog on a held queue)\n' +
        textTable(
          ['workers', 'logins/s (median)', 'every drain', 'logins', 'seconds', 'CPU ms/login (workers)', 'Redis CPU ms/login', 'Redis commands/login'],
          f.login.workers.map((w) => [
            String(w.workers),
            n(w.perSecond),
            w.runs.map(n).join(' / '),
            `${w.loggedIn}/${w.logins}`,
            n(w.seconds),
            n(w.cpuPerLogin),
            n(w.redisCpuPerLogin),
            n(w.redisCommandsPerLogin),
          ]),
        ),
    );
    out.push(
      'Webhook → auth-success against offered load (one worker; sockets on web-1, webhooks to web-2)\n' +
        textTable(
          [
            'offered/s',
            'achieved/s',
            'p50 ms',
            'p99 ms',
            'max ms',
            'p50 ms: accept / intake / queued / worker / delivery',
            'Redis round trip p50 / p99 ms',
            'missing',
            'saturated',
          ],
          f.login.latency.map((p) => [
            n(p.rate),
            n(p.achievedRate),
            n(p.p50),
            n(p.p99),
            n(p.max),
            [p.legs.accept, p.legs.intake, p.legs.queued, p.legs.worker, p.legs.delivery].map((l) => n(l.p50)).join(' / '),
            `${n(p.redisRtt.p50)} / ${n(p.redisRtt.p99)}`,
            String(p.missing + p.webhookFailures),
            p.saturated ? 'yes' : '',
          ]),
        ),
    );
  }
  if (f.pipeline) {
    const side = (p: PathFigures): string[] => [n(p.p50), n(p.p99), n(p.workerCpuPerLogin), `${n(p.redisRtt.p50)} / ${n(p.redisRtt.p99)}`];
    out.push(
      'Webhook → auth-success beside the simplest pipeline (one worker each; sockets on web-1, webhooks to web-2; alternating steps, medians of the rounds)\n' +
        textTable(
          [
            'offered/s',
            'logins a side',
            'service p50 / p99 ms',
            'pipeline p50 / p99 ms',
            'p50 ratio',
            'target',
            'p99 ratio',
            'target',
            'rounds p50 ratio',
            'rounds p99 ratio',
            'worker CPU ms/login',
            'pipeline',
            'Redis round trip p50 / p99 ms',
            'pipeline',
          ],
          f.pipeline.rates.map((c) => {
            const [sp50, sp99, scpu, srtt] = side(c.service);
            const [pp50, pp99, pcpu, prtt] = side(c.pipeline);
            const t = TARGETS.pipelineLatency[c.rate];
            const rounds = (k: 'p50' | 'p99'): string => c.roundRatios.map((r) => n(r[k])).join(' / ');
            return [
              n(c.rate),
              `${n(c.service.count)} / ${n(c.pipeline.count)}`,
              `${sp50} / ${sp99}`,
              `${pp50} / ${pp99}`,
              n(c.p50Ratio),
              t ? `≤ ${t.p50}` : '',
              n(c.p99Ratio),
              t ? `≤ ${t.p99}` : '',
              rounds('p50'),
              rounds('p99'),
              scpu!,
              pcpu!,
              srtt!,
              prtt!,
            ];
          }),
        ),
    );
    const { service, pipeline, p99BoundMs } = f.pipeline.sustained;
    out.push(
      `Rate one worker sustains (every login, every webhook accepted, the rate held, p99 ≤ ${p99BoundMs} ms): the steps of each search, in order\n` +
        textTable(
          ['side', 'offered/s', 'achieved/s', 'p50 ms', 'p99 ms', 'missing / refused', 'sustained', `CPU ms a login: ${CPU_PARTS}`],
          [...service.steps.map((st) => ['service', st] as const), ...pipeline.steps.map((st) => ['pipeline', st] as const)].map(([name, st]) => [
            name,
            n(st.rate),
            n(st.achievedRate),
            n(st.p50),
            n(st.p99),
            `${st.missing} / ${st.webhookFailures}`,
            st.sustained ? 'yes' : 'no',
            cpuSplit(st.cpuPerLogin),
          ]),
        ),
    );
  }
  if (f.cost) {
    out.push(
      'Cost per login, one worker: confirmation off (replies off / on) and on (code + YES, each answered)\n' +
        textTable(
          ['login', 'chat messages', 'logins/s', 'logins', 'worker CPU ms/login', 'Redis CPU ms/login', 'Redis commands/login'],
          f.cost.map((c) => [
            COST_LABEL[c.mode],
            String(c.messagesPerLogin),
            n(c.perSecond),
            `${c.loggedIn}/${c.logins}`,
            n(c.cpuPerLogin),
            n(c.redisCpuPerLogin),
            n(c.redisCommandsPerLogin),
          ]),
        ),
    );
    out.push(scriptTable(f.cost));
  }
  if (f.memory) {
    out.push(
      'Redis memory against active registrations\n' +
        textTable(
          ['registrations', 'used_memory MB', 'B/registration (INFO)', 'B/registration (own keys)'],
          f.memory.registrations.map((p) => [n(p.registrations), n(p.usedMemoryMB), n(p.bytesPerRegistration), n(p.prefixBytesPerRegistration)]),
        ),
    );
    const idle = f.memory.idle;
    const idleRow = idle ? [[`${n(idle.sockets)}, idle ${idle.seconds} s (median)`, `${n(idle.medianMB)} (${n(idle.minMB)}–${n(idle.maxMB)})`]] : [];
    out.push(
      `web-1 RSS against sockets (just connected; then the last point left idle)\n${textTable(['sockets', 'RSS MB'], [...f.memory.sockets.map((p) => [n(p.sockets), n(p.rssMB)]), ...idleRow])}`,
    );
  }
  return out;
}

export function writeJson(file: string, meta: Record<string, unknown>, figures: Figures, all: Row[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tops = ceilings(endpointList(figures), figures.crypto);
  writeFileSync(file, `${JSON.stringify({ ...meta, machine: machine(), targets: all.filter((r) => r.target), ceilings: tops, figures }, null, 2)}\n`);
}

export function machine(): { cpus: number; cpu: string; memoryMB: number; node: string } {
  return { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', memoryMB: Math.round(os.totalmem() / 2 ** 20), node: process.version };
}
