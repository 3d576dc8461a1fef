import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EndpointFigures } from './scenarios/endpoints.js';
import type { IngestionFigures } from './scenarios/ingestion.js';
import type { LoginFigures } from './scenarios/login.js';
import type { MemoryFigures } from './scenarios/memory.js';

/** The figures as a table (stdout) and as JSON (bench/results/latest.json), each beside its target. */
export interface Figures {
  ingestion?: IngestionFigures;
  login?: LoginFigures;
  endpoints?: EndpointFigures;
  memory?: MemoryFigures;
}

interface Row {
  section: string;
  figure: string;
  value: number | null;
  unit: string;
  /** e.g. '≥ 0.6'; absent for figures shown for context */
  target?: string;
  pass?: boolean;
}

const at = (v: number | undefined | null): number | null => (v === undefined || v === null || Number.isNaN(v) ? null : v);

function target(value: number | null, op: '≥' | '≤' | '<' | '=', limit: number): Pick<Row, 'target' | 'pass'> {
  const pass =
    value === null ? false : op === '≥' ? value >= limit : op === '≤' ? value <= limit : op === '<' ? value < limit : value === limit;
  return { target: `${op} ${limit.toLocaleString('en')}`, pass };
}

export function rows(f: Figures): Row[] {
  const out: Row[] = [];
  const add = (section: string, figure: string, value: number | undefined | null, unit: string, t?: Pick<Row, 'target' | 'pass'>): void => {
    out.push({ section, figure, value: at(value), unit, ...(t ?? {}) });
  };
  if (f.ingestion) {
    const i = f.ingestion;
    const s = 'webhook ingestion';
    add(s, 'bare Koa baseline', i.baseline.rps, 'req/s');
    add(s, 'baseline p50 / p99', i.baseline.p50, `ms / ${i.baseline.p99} ms`);
    add(s, 'service, one web node, workers stopped', i.service.rps, 'req/s');
    add(s, 'service p50 / p99', i.service.p50, `ms / ${i.service.p99} ms`);
    add(s, 'service / baseline', i.ratio, '', target(i.ratio, '≥', 0.6));
    add(s, 'CPU per request: baseline / web node', i.cpuPerRequest.baseline, `ms / ${i.cpuPerRequest.web} ms`);
    add(s, 'webhooks accepted (2xx)', i.accepted, `(${i.refused} refused)`);
    add(s, 'backlog drained by one worker', i.drain.jobsPerSecond, `jobs/s (${i.drain.jobs} jobs in ${i.drain.seconds} s, ${i.cpuPerRequest.workerPerJob} ms CPU each)`);
    add(s, 'webhooks lost (accepted, never completed)', i.lost, '', target(i.lost, '=', 0));
    add(s, 'jobs completed twice / failed', i.repeats, `/ ${i.failed}`, target(i.repeats + i.failed, '=', 0));
  }
  if (f.login) {
    const l = f.login.latency;
    const s = 'end-to-end login';
    add(s, `clients on sockets, webhooks at ${l.rate}/s`, l.clients, `(achieved ${l.achievedRate}/s; first ${l.warmup} are warm-up)`);
    add(s, 'webhook → auth-success p50', l.p50, 'ms', target(l.p50, '<', 5));
    add(s, 'webhook → auth-success p99', l.p99, 'ms', target(l.p99, '<', 15));
    add(s, 'webhook → auth-success max', l.max, `ms (first ${l.first} ms, last ${l.last} ms)`);
    add(s, 'of which queued p50 / p99', l.stages.queuedP50, `ms / ${l.stages.queuedP99} ms`);
    add(s, 'of which in the worker p50 / p99', l.stages.processingP50, `ms / ${l.stages.processingP99} ms`);
    const statuses = Object.entries(l.failureStatuses).map(([status, n]) => `${n}× ${status === '0' ? 'no answer' : status}`);
    add(s, 'auth-success missing / webhooks refused', l.missing, `/ ${l.webhookFailures}${statuses.length ? ` (${statuses.join(', ')})` : ''}`, target(l.missing + l.webhookFailures, '=', 0));
    const w = f.login.worker;
    add(s, 'logins/s, one worker (backlog)', w.perSecond, `(${w.loggedIn}/${w.logins} in ${w.seconds} s; ${w.perSecondWithStart}/s with start-up)`, target(w.perSecond, '≥', 2000));
    add(s, 'worker CPU per login: backlog / at the fixed rate', w.cpuPerLogin, `ms / ${l.workerCpuPerLogin} ms`);
    add(s, 'Redis CPU per login (backlog)', w.redisCpuPerLogin, 'ms');
    add(s, 'logins lost in the worker run', w.lost, '', target(w.lost, '=', 0));
  }
  if (f.endpoints) {
    const s = 'endpoints (one web node)';
    for (const [name, r] of [
      ['register-pin', f.endpoints.registerPin],
      ['check-login (pending)', f.endpoints.checkLogin],
      ['profile', f.endpoints.profile],
    ] as const) {
      add(s, `${name}`, r.rps, `req/s, p99 ${r.latency.p99} ms${r.failed ? `, ${r.failed} failed` : ''}`);
    }
  }
  if (f.memory) {
    const m = f.memory;
    const s = 'memory';
    add(s, `Redis bytes per registration (INFO, ${m.registrations})`, m.bytesPerRegistration, 'B', target(m.bytesPerRegistration, '≤', 1024));
    add(s, 'Redis bytes per registration (own keys)', m.prefixBytesPerRegistration, 'B', target(m.prefixBytesPerRegistration, '≤', 1024));
    add(s, 'web-1 RSS: at start / after the run, no sockets', m.rss.web1Start, `MB / ${m.rss.web1Idle} MB`);
    add(s, `web-1 RSS, ${m.idleSockets} idle sockets`, m.rss.web1, 'MB', target(m.rss.web1, '≤', 150));
    add(s, 'web-2 RSS', m.rss.web2, 'MB');
    add(s, 'worker RSS', m.rss.worker, 'MB');
  }
  return out;
}

export function table(all: Row[]): string {
  const cells = all.map((r) => [
    r.section,
    r.figure,
    `${r.value === null ? '—' : r.value.toLocaleString('en')} ${r.unit}`.trim(),
    r.target ?? '',
    r.pass === undefined ? '' : r.pass ? 'pass' : 'MISS',
  ]);
  const head = ['section', 'figure', 'value', 'target', ''];
  const widths = head.map((h, c) => Math.max(h.length, ...cells.map((row) => [...row[c]!].length)));
  const line = (row: string[]): string => row.map((cell, c) => cell + ' '.repeat(widths[c]! - [...cell].length)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export function writeJson(file: string, meta: Record<string, unknown>, figures: Figures, all: Row[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', memoryMB: Math.round(os.totalmem() / 2 ** 20), node: process.version };
  writeFileSync(file, JSON.stringify({ ...meta, machine, targets: all.filter((r) => r.target), figures }, null, 2) + '\n');
}
