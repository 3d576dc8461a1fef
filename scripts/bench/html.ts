import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Figures, Row } from './report.js';
import { curveTables, TARGETS } from './report.js';

/**
 * The HTML report beside latest.json: the figures beside their targets, the per-endpoint table
 * and the four curves a deployment is sized from, drawn with uPlot (a 50 KB charting library,
 * inlined with its stylesheet: the file opens from disk with no network). The terminal's tables
 * are repeated under the charts, so every drawn point can be read as a number.
 */
const require = createRequire(import.meta.url);
const asset = (file: string): string => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');

/** Text for inside a <script>: nothing in it may close the element. */
const scriptSafe = (text: string): string => text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A chart: x values, named y series, axis labels. */
export interface Chart {
  id: string;
  title: string;
  note: string;
  xLabel: string;
  yLabel: string;
  x: number[];
  series: Array<{ label: string; values: Array<number | null>; color: string }>;
  /** a horizontal line at the target, if any */
  target?: { value: number; label: string };
}

export function charts(f: Figures): Chart[] {
  const out: Chart[] = [];
  if (f.login?.workers.length) {
    const w = f.login.workers;
    out.push({
      id: 'workers',
      title: 'Logins per second against worker processes (one Redis)',
      note: 'A backlog of logins on a held queue, the workers started, the queue released; first to last completion.',
      xLabel: 'worker processes',
      yLabel: 'logins/s',
      x: w.map((p) => p.workers),
      series: [{ label: 'logins/s', values: w.map((p) => p.perSecond), color: '#1f77b4' }],
      target: { value: TARGETS.workerLoginsPerSecond, label: 'target, one worker' },
    });
  }
  if (f.login?.latency.length) {
    const l = f.login.latency;
    out.push({
      id: 'latency',
      title: 'Webhook → auth-success latency against offered load',
      note: 'Open loop: sockets on web-1, webhooks at a fixed rate to web-2; one worker. The last point is where it saturated, if it did.',
      xLabel: 'offered logins/s',
      yLabel: 'ms',
      x: l.map((p) => p.rate),
      series: [
        { label: 'p50 ms', values: l.map((p) => p.p50), color: '#2ca02c' },
        { label: 'p99 ms', values: l.map((p) => p.p99), color: '#d62728' },
      ],
    });
  }
  if (f.memory?.sockets.length) {
    const s = f.memory.sockets;
    out.push({
      id: 'sockets',
      title: 'Web node resident memory against idle sockets',
      note:
        'Socket.IO clients on the websocket transport, connected to web-1, each point read just after its sockets connected.' +
        (f.memory.idle
          ? ` Left idle ${f.memory.idle.seconds} s, the last point's RSS has a median of ${f.memory.idle.medianMB} MB (${f.memory.idle.minMB}–${f.memory.idle.maxMB}).`
          : ''),
      xLabel: 'idle sockets',
      yLabel: 'RSS MB',
      x: s.map((p) => p.sockets),
      series: [{ label: 'RSS MB', values: s.map((p) => p.rssMB), color: '#9467bd' }],
      target: { value: TARGETS.rssMB, label: `target at ${TARGETS.rssSockets.toLocaleString('en')} sockets` },
    });
  }
  if (f.memory?.registrations.length) {
    const r = f.memory.registrations;
    out.push({
      id: 'redis',
      title: 'Redis memory against active registrations',
      note: 'used_memory of the whole server, and bytes per registration (whole server and the benchmark’s own keys).',
      xLabel: 'active registrations',
      yLabel: 'bytes per registration',
      x: r.map((p) => p.registrations),
      series: [
        { label: 'B/registration (INFO)', values: r.map((p) => p.bytesPerRegistration), color: '#ff7f0e' },
        { label: 'B/registration (own keys)', values: r.map((p) => p.prefixBytesPerRegistration), color: '#8c564b' },
      ],
      target: { value: TARGETS.bytesPerItem, label: 'target' },
    });
  }
  return out;
}

export function renderHtml(meta: Record<string, unknown>, figures: Figures, all: Row[]): string {
  const list = charts(figures);
  const targetRows = all
    .map(
      (r) =>
        `<tr class="${r.pass === undefined ? '' : r.pass ? 'pass' : 'miss'}"><td>${escapeHtml(r.section)}</td><td>${escapeHtml(r.figure)}</td><td>${escapeHtml(`${r.value === null ? '—' : r.value.toLocaleString('en')} ${r.unit}`)}</td><td>${escapeHtml(r.target ?? '')}</td><td>${r.pass === undefined ? '' : r.pass ? 'met' : 'not met'}</td></tr>`,
    )
    .join('\n');
  const sections = list
    .map((c) => `<section><h2>${escapeHtml(c.title)}</h2><p>${escapeHtml(c.note)}</p><div class="chart" id="chart-${c.id}"></div></section>`)
    .join('\n');
  const tables = curveTables(figures)
    .map((t) => `<pre>${escapeHtml(t)}</pre>`)
    .join('\n');
  const metaLine = ['mode', 'startedAt', 'seconds', 'loadAverageBefore', 'loadAverageAfter', 'complete']
    .map((k) => `${k}: ${escapeHtml(JSON.stringify(meta[k]))}`)
    .join(' · ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pin-auth benchmark</title>
<style>${asset('uPlot.min.css')}</style>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; }
tr.miss td { background: #fde2e2; } tr.pass td:last-child { color: #17803d; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; } .chart { margin: 1em 0 2em; }
</style></head><body>
<h1>pin-auth benchmark</h1>
<p>${metaLine}</p>
<p>Ratios compare the service with a bare Koa + koa-bodyparser server measured in the same run, on the same machine, with the same load generator: they hold when the machine is busy; absolute figures do not.</p>
<h2>Figures and targets</h2>
<table><tr><th>section</th><th>figure</th><th>value</th><th>target</th><th></th></tr>
${targetRows}
</table>
${sections}
<h2>The curves as numbers</h2>
${tables}
<script>${scriptSafe(asset('uPlot.iife.min.js'))}</script>
<script>
const CHARTS = ${scriptSafe(JSON.stringify(list))};
for (const c of CHARTS) {
  const el = document.getElementById('chart-' + c.id);
  const series = [{ label: c.xLabel }, ...c.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: true, size: 7 } }))];
  const data = [c.x, ...c.series.map((s) => s.values)];
  if (c.target) {
    series.push({ label: c.target.label, stroke: '#888', dash: [6, 4], width: 1, points: { show: false } });
    data.push(c.x.map(() => c.target.value));
  }
  new uPlot({
    width: Math.min(1000, el.clientWidth || 1000), height: 320,
    scales: { x: { time: false } },
    axes: [{ label: c.xLabel }, { label: c.yLabel }],
    series,
  }, data, el);
}
</script>
</body></html>
`;
}

export function writeHtml(file: string, meta: Record<string, unknown>, figures: Figures, all: Row[]): void {
  writeFileSync(file, renderHtml(meta, figures, all));
}
