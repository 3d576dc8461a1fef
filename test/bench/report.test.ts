import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runNode } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/redis.js';
import type { CpuPerLogin } from '../../scripts/bench/open-loop.js';

/**
 * The benchmark's report, produced for real on the smallest sizes (`--smoke`): every scenario
 * runs against real processes and Redis, and the JSON and the HTML must carry every curve. The
 * figures themselves are not judged here (speed targets belong to `npm run bench`); this keeps
 * the benchmark from rotting between the runs that are.
 */
interface Report {
  mode: string;
  complete: boolean;
  targets: Array<{ figure: string; target: string; value: number | null; pass: boolean }>;
  ceilings: Array<{ endpoint: string; cryptoMs: number; floorSumMs: number; baselineSumMs: number; ceiling: number; ratio: number }>;
  figures: {
    crypto: { es256Sign: number; hmacToken: number; hmacPin: number; sha256Emoji: number; hmacWebhook: number };
    ingestion: Side & { accepted: number; lost: number; ratio: number };
    login: {
      latency: Array<{
        rate: number;
        clients: number;
        missing: number;
        saturated: boolean;
        legs: { jobs: number } & Record<'accept' | 'intake' | 'queued' | 'worker' | 'delivery', { p50: number }>;
        redisRtt: { p50: number; p99: number };
      }>;
      workers: Array<{ workers: number; loggedIn: number; logins: number; redisCommandsPerLogin: number; perSecond: number; runs: number[] }>;
    };
    pipeline: {
      rates: Array<{
        rate: number;
        service: PathFigures;
        pipeline: PathFigures;
        p50Ratio: number;
        p99Ratio: number;
        roundRatios: Array<{ p50: number; p99: number }>;
      }>;
      sustained: { p99BoundMs: number; service: SustainSide; pipeline: SustainSide; ratio: number | null };
    };
    cost: Array<{
      mode: string;
      loggedIn: number;
      logins: number;
      messagesPerLogin: number;
      redisCommandsPerLogin: number;
      redisByScript: Array<{ name: string; calls: number; us: number }>;
      redisByScriptComplete: boolean;
    }>;
    endpoints: Record<
      string,
      Side & {
        ratio: number;
        ratioRange: [number, number];
        p99Ratio: number;
        cpuRatio: number | null;
        sumCpuRatio: number | null;
      }
    >;
    memory: {
      registrations: Array<{ registrations: number; prefixBytesPerRegistration: number }>;
      sessions: { logins: number; bytesPerSession: number; bytesPerPerson: number };
      sockets: Array<{ sockets: number; rssMB: number }>;
      idle: { sockets: number; seconds: number; medianMB: number; minMB: number; maxMB: number } | null;
    };
  };
}

/** One side of the comparison with the simplest pipeline at a rate. */
interface PathFigures {
  p50: number;
  p99: number;
  count: number;
  missing: number;
  webhookFailures: number;
  workerCpuPerLogin: number;
  cpuPerLogin: CpuPerLogin;
  redisRtt: { p50: number; p99: number };
  rounds: Array<{ p50: number; p99: number }>;
}

interface SustainSide {
  rate: number | null;
  capped: boolean;
  steps: Array<{ rate: number; p99: number; missing: number; webhookFailures: number; sustained: boolean; cpuPerLogin: CpuPerLogin }>;
}

/** The two sides of a figure compared with bare Koa. */
interface Side {
  service: { ok: number; failed: number; cpuPerRequest: number; loadCpuPerRequest: number; redisCpuPerRequest: number | null };
  baseline: { ok: number; cpuPerRequest: number; loadCpuPerRequest: number; redisCpuPerRequest: number | null };
}

/**
 * The parts of a step's CPU a login add up to its sum, which is more than nothing (a process's
 * own share may read 0 at smoke sizes: /proc counts in 10 ms ticks).
 */
function cpuAdds(c: CpuPerLogin, what: string): void {
  for (const k of ['worker', 'socketNode', 'webhookNode', 'redis', 'load'] as const) expect(c[k], `${what}: ${k}`).to.be.at.least(0);
  expect(c.sum, what)
    .to.be.greaterThan(0)
    .and.closeTo(c.worker + c.socketNode + c.webhookNode + c.redis + c.load, 0.005);
}

describe('benchmark report (smoke sizes)', function () {
  this.timeout(300_000);
  let dir: string;
  let report: Report;
  let html: string;
  let stdout = '';

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bench-report-'));
    const run = await runNode(['dist/scripts/bench.js', '--smoke', `--out=${dir}`], { REDIS_URL });
    stdout = run.stdout;
    if (run.code !== 0) throw new Error(`bench --smoke exited ${run.code}:\n${run.stderr.slice(-4000)}`);
    report = JSON.parse(readFileSync(path.join(dir, 'latest.json'), 'utf8')) as Report;
    html = readFileSync(path.join(dir, 'latest.html'), 'utf8');
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs every scenario to completion and loses nothing', () => {
    expect(report.mode).to.equal('smoke');
    expect(report.complete).to.equal(true);
    expect(report.figures.ingestion.accepted).to.be.greaterThan(0);
    expect(report.figures.ingestion.lost).to.equal(0);
    for (const w of report.figures.login.workers) expect(w.loggedIn, `${w.workers} workers`).to.equal(w.logins);
    // the cost table: every login made, with confirmation on too (two chat messages each)
    const costs = report.figures.cost;
    expect(costs.map((c) => [c.mode, c.messagesPerLogin])).to.deep.equal([
      ['off', 1],
      ['replies', 1],
      ['confirmed', 2],
    ]);
    for (const c of costs) expect(c.loggedIn, c.mode).to.equal(c.logins);
    for (const c of costs) expect(c.redisCommandsPerLogin, c.mode).to.be.greaterThan(0);
  });

  it("times Redis's scripts of a login: one claim and one completion a chat message, BullMQ's share beside them", () => {
    const calls = (mode: string, name: string): number | undefined =>
      report.figures.cost.find((c) => c.mode === mode)?.redisByScript.find((t) => t.name === name)?.calls;
    for (const c of report.figures.cost) {
      expect(c.redisByScriptComplete, c.mode).to.equal(true);
      for (const t of c.redisByScript) expect(t.us, `${c.mode} ${t.name}`).to.be.greaterThan(0);
    }
    // confirmation off: the code's message claims and completes; on: the code asks, the YES claims again and completes
    expect([calls('off', 'claim-login'), calls('off', 'complete-login'), calls('off', 'audit-append')]).to.deep.equal([1, 1, 1]);
    expect([calls('confirmed', 'claim-login'), calls('confirmed', 'complete-login')]).to.deep.equal([2, 1]);
    expect(calls('off', 'BullMQ')).to.be.at.least(1);
    // the reply's send, only where replies are on
    expect(calls('off', 'send-begin')).to.equal(undefined);
    expect(calls('replies', 'send-begin')).to.equal(1);
    expect(stdout).to.include('Redis time per login by script');
  });

  it('has every curve, each point in order', () => {
    const { login, memory } = report.figures;
    expect(login.workers.map((w) => w.workers)).to.deep.equal([1, 2]);
    // each point is the median of its drains (smoke: two, the lower one), every drain kept
    for (const w of login.workers) {
      expect(w.runs, `${w.workers} workers`).to.have.length(2);
      expect(w.perSecond).to.equal(Math.min(...w.runs));
    }
    // the curve stops at its first saturated step, which a heavily loaded machine can make the first
    const rates = login.latency.map((p) => p.rate);
    expect(rates.length).to.be.at.least(1);
    expect(rates).to.deep.equal([50, 100].slice(0, rates.length));
    for (const p of login.latency.slice(0, -1)) expect(p.saturated, `${p.rate}/s`).to.equal(false);
    for (const p of login.latency) {
      expect(p.missing, `${p.rate}/s`).to.equal(0);
      // every measured login is split into its legs. Their ends are read by different processes'
      // clocks (a fraction of a millisecond apart), and the worker publishes auth-success before
      // it marks the job finished, so a short leg can read slightly below 0: each is a number
      expect(p.legs.jobs, `${p.rate}/s legs of ${p.clients} logins: ${JSON.stringify(p)}`).to.be.greaterThan(0);
      for (const leg of [p.legs.accept, p.legs.intake, p.legs.queued, p.legs.worker, p.legs.delivery]) expect(leg.p50).to.satisfy(Number.isFinite);
      // the machine's price of a hop, read beside the step
      expect(p.redisRtt.p50, `${p.rate}/s round trip`).to.be.greaterThan(0).and.at.most(p.redisRtt.p99);
    }
    expect(memory.registrations.map((p) => p.registrations)).to.deep.equal([50, 100]);
    expect(memory.sockets.map((p) => p.sockets)).to.deep.equal([0, 20, 40]);
    for (const p of memory.sockets) expect(p.rssMB).to.be.greaterThan(10);
    // the last point's sockets, then left idle: RSS read over the window, median within its range
    expect(memory.idle).to.include({ sockets: 40, seconds: 1 });
    expect(memory.idle!.medianMB).to.be.within(memory.idle!.minMB, memory.idle!.maxMB).and.greaterThan(10);
    expect(memory.sessions.logins).to.equal(20);
    expect(memory.sessions.bytesPerSession).to.be.greaterThan(0);
    // a new person keeps their account, phone and directory entry besides the session
    expect(memory.sessions.bytesPerPerson).to.be.greaterThan(0);
  });

  it('compares the service with the simplest pipeline, alternately, at 100 and 200 logins/s and in the rate one worker sustains', () => {
    const { rates, sustained } = report.figures.pipeline;
    expect(rates.map((c) => c.rate)).to.deep.equal([100, 200]);
    for (const c of rates) {
      for (const [name, side] of [
        ['service', c.service],
        ['pipeline', c.pipeline],
      ] as const) {
        // every login of both paths arrives; each side measured in its own step of every round (smoke: one)
        expect(side.count, `${name} at ${c.rate}/s`).to.be.greaterThan(0);
        expect(side.missing + side.webhookFailures, `${name} at ${c.rate}/s`).to.equal(0);
        expect(side.rounds, `${name} at ${c.rate}/s`).to.have.length(1);
        expect(side.p50).to.be.greaterThan(0).and.at.most(side.p99);
        expect(side.redisRtt.p50, `${name} round trip`).to.be.greaterThan(0).and.at.most(side.redisRtt.p99);
        cpuAdds(side.cpuPerLogin, `${name} at ${c.rate}/s`);
        // the worker's share is the worker figure beside it (both over the same logins)
        expect(side.cpuPerLogin.worker, `${name} at ${c.rate}/s`).to.be.closeTo(side.workerCpuPerLogin, 0.005);
      }
      // each round's ratio is its two steps' quotient; the figure is their median (smoke: the one round's)
      expect(c.roundRatios).to.have.length(1);
      expect(c.roundRatios[0]!.p50, `${c.rate}/s`).to.be.closeTo(c.service.rounds[0]!.p50 / c.pipeline.rounds[0]!.p50, 0.01);
      expect(c.roundRatios[0]!.p99, `${c.rate}/s`).to.be.closeTo(c.service.rounds[0]!.p99 / c.pipeline.rounds[0]!.p99, 0.01);
      expect(c.p50Ratio, `${c.rate}/s`).to.equal(c.roundRatios[0]!.p50);
      expect(c.p99Ratio, `${c.rate}/s`).to.equal(c.roundRatios[0]!.p99);
      expect(c.service.p50, `${c.rate}/s`).to.equal(c.service.rounds[0]!.p50);
    }
    // each search starts at 100/s; smoke tries no rate past 200 and bisects nothing
    expect(sustained.p99BoundMs).to.equal(250);
    for (const [name, side] of [
      ['service', sustained.service],
      ['pipeline', sustained.pipeline],
    ] as const) {
      expect(side.steps[0]?.rate, name).to.equal(100);
      for (const st of side.steps) {
        expect(st.rate, name).to.be.at.most(200);
        // sustained means every login arrived, every webhook was accepted and p99 stayed under the bound
        if (st.sustained) expect(st.missing + st.webhookFailures, `${name} at ${st.rate}/s`).to.equal(0);
        if (st.sustained) expect(st.p99, `${name} at ${st.rate}/s`).to.be.at.most(sustained.p99BoundMs);
        cpuAdds(st.cpuPerLogin, `${name} at ${st.rate}/s`);
      }
      const ok = side.steps.filter((st) => st.sustained).map((st) => st.rate);
      expect(side.rate, name).to.equal(ok.length ? Math.max(...ok) : null);
      // a rate fails when two steps in a row at it are not sustained: a failed step is tried once more
      side.steps.forEach((st, i) => {
        if (!st.sustained && (i === 0 || side.steps[i - 1]!.rate !== st.rate))
          expect(side.steps[i + 1]?.rate, `${name} retries ${st.rate}/s`).to.equal(st.rate);
      });
      // capped: no rate failed, the search stopped at the highest it may try
      const failed = side.steps.some((st, i) => !st.sustained && i > 0 && side.steps[i - 1]!.rate === st.rate && !side.steps[i - 1]!.sustained);
      expect(side.capped, name).to.equal(side.rate !== null && !failed);
      if (side.capped) expect(side.rate, name).to.equal(200);
    }
    if (sustained.service.rate !== null && sustained.pipeline.rate !== null)
      expect(sustained.ratio).to.be.closeTo(sustained.service.rate / sustained.pipeline.rate, 0.01);
    else expect(sustained.ratio).to.equal(null);
    // each ratio is judged against the target
    const targets = Object.fromEntries(report.targets.map((t) => [t.figure, t]));
    const expected: Array<[string, string, number | null]> = [
      ['webhook → auth-success p50 at 100/s, service / pipeline', '≤ 1.3', rates[0]!.p50Ratio],
      ['webhook → auth-success p99 at 100/s, service / pipeline', '≤ 1.5', rates[0]!.p99Ratio],
      ['webhook → auth-success p50 at 200/s, service / pipeline', '≤ 2', rates[1]!.p50Ratio],
      ['webhook → auth-success p99 at 200/s, service / pipeline', '≤ 2', rates[1]!.p99Ratio],
      ['logins/s one worker sustains, service / pipeline', '≥ 0.8', sustained.ratio],
    ];
    for (const [figure, target, value] of expected) {
      expect(targets[figure], figure).to.include({ target, value });
      const limit = Number(target.slice(2));
      expect(targets[figure]!.pass, figure).to.equal(value !== null && (target.startsWith('≤') ? value <= limit : value >= limit));
    }
  });

  it('compares every client endpoint with bare Koa, every request answered', () => {
    const eps = report.figures.endpoints;
    expect(Object.keys(eps).sort()).to.deep.equal(['checkPending', 'checkVerified', 'profile', 'refresh', 'registerPin']);
    for (const [name, e] of Object.entries(eps)) {
      expect(e.service.ok, name).to.be.greaterThan(0);
      expect(e.service.failed, name).to.equal(0);
      expect(e.baseline.ok, name).to.be.greaterThan(0);
      expect(e.ratio, name).to.be.a('number');
      // the median of the rounds lies within their range, and the CPU ratio is the two sides' quotient
      expect(e.ratio, name).to.be.within(e.ratioRange[0], e.ratioRange[1]);
      // (null when the smoke run's baseline used less than a clock tick of CPU)
      if (e.baseline.cpuPerRequest > 0) expect(e.cpuRatio, name).to.be.closeTo(e.service.cpuPerRequest / e.baseline.cpuPerRequest, 0.01);
      else expect(e.cpuRatio, name).to.equal(null);
      expect(e.p99Ratio, name).to.be.a('number');
      // every process on the cores is counted: the load generator on both sides, Redis on the service's only
      expect(e.service.loadCpuPerRequest, name).to.be.greaterThan(0);
      expect(e.baseline.loadCpuPerRequest, name).to.be.greaterThan(0);
      expect(e.service.redisCpuPerRequest, name).to.be.a('number').and.at.least(0);
      expect(e.baseline.redisCpuPerRequest, name).to.equal(null);
      const sum = (s: { cpuPerRequest: number; loadCpuPerRequest: number; redisCpuPerRequest: number | null }): number =>
        s.cpuPerRequest + s.loadCpuPerRequest + (s.redisCpuPerRequest ?? 0);
      expect(e.sumCpuRatio, name).to.be.closeTo(sum(e.service) / sum(e.baseline), 0.02);
    }
    for (const figure of ['register-pin / baseline', 'refresh-token p99 / baseline p99', 'service / baseline (median of rounds)']) {
      expect(report.targets.map((t) => t.figure)).to.include(figure);
    }
  });

  it("states each ratio's ceiling from the same rounds and the cryptography each request must do", () => {
    const { crypto, endpoints: e, ingestion } = report.figures;
    // timed with the service's own keys: an ES256 signature costs several MACs
    for (const [what, ms] of Object.entries(crypto)) expect(ms, what).to.be.greaterThan(0);
    expect(crypto.es256Sign).to.be.greaterThan(crypto.hmacToken);
    const sides: Record<string, [Side, number]> = {
      'webhook ingestion': [ingestion, crypto.hmacWebhook],
      'register-pin': [e.registerPin!, crypto.hmacPin + crypto.sha256Emoji],
      'check-login (pending)': [e.checkPending!, crypto.hmacPin],
      'check-login (verified)': [e.checkVerified!, crypto.hmacPin],
      profile: [e.profile!, 0],
      'refresh-token': [e.refresh!, crypto.es256Sign + 2 * crypto.hmacToken],
    };
    expect(report.ceilings.map((c) => c.endpoint)).to.deep.equal(Object.keys(sides));
    for (const c of report.ceilings) {
      const [side, cryptoMs] = sides[c.endpoint]!;
      const { service: s, baseline: b } = side;
      expect(c.cryptoMs, c.endpoint).to.be.closeTo(cryptoMs, 1e-4);
      // bare Koa's own work, the endpoint's cryptography, Redis as measured, the baseline's load generator
      expect(c.floorSumMs, c.endpoint).to.be.closeTo(b.cpuPerRequest + cryptoMs + s.redisCpuPerRequest! + b.loadCpuPerRequest, 1e-3);
      expect(c.baselineSumMs, c.endpoint).to.be.closeTo(b.cpuPerRequest + b.loadCpuPerRequest, 1e-3);
      expect(c.ceiling, c.endpoint).to.be.closeTo(c.baselineSumMs / c.floorSumMs, 0.01);
    }
    expect(stdout).to.include('Ceiling: the best req/s ratio');
  });

  it('prints the figures and each curve as a table', () => {
    for (const title of [
      'Webhook → auth-success beside the simplest pipeline',
      'Rate one worker sustains',
      'Throughput per endpoint',
      'CPU ms per request of every process',
      'Logins/s against worker processes',
      'Cost per login, one worker',
      'Webhook → auth-success against offered load',
      'Redis memory against active registrations',
      'web-1 RSS against sockets',
    ]) {
      expect(stdout).to.include(title);
    }
  });

  it('writes a self-contained HTML report with the four charts', () => {
    // the charting library and its data are inline: nothing is fetched when the file is opened
    expect(html).to.not.match(/<script[^>]+src=/i);
    expect(html).to.not.match(/<link[^>]+href=/i);
    expect(html).to.include('uPlot');
    const charts = /const CHARTS = (\[.*?\]);\n/s.exec(html);
    expect(charts, 'chart data').to.not.equal(null);
    const list = JSON.parse(charts![1]!) as Array<{ id: string; x: number[] }>;
    expect(list.map((c) => c.id)).to.deep.equal(['workers', 'latency', 'sockets', 'redis']);
    for (const c of list) expect(c.x.length, c.id).to.be.at.least(c.id === 'latency' ? 1 : 2);
  });
});
