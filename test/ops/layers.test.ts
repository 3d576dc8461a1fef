import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/processes.js';

/**
 * Dependencies point down (docs/development.md, "Layers"): a module imports only from its own
 * layer or the ones below it, and no file reaches itself through its imports. Read from the
 * source's import lines, type-only imports included: a type is a dependency too.
 */

/** Lowest first. A folder of src/, a root file, or one file that sits apart from its folder. */
const LAYERS: string[][] = [
  // config.ts reads the chat texts' defaults, the signing keys and the host-name rule with the leaves beside it
  ['errors.ts', 'remembered.ts', 'random.ts', 'ids.ts', 'config.ts', 'chat-catalogue.ts', 'key-material.ts', 'allowed-hosts.ts'],
  ['redis'],
  // what every layer writes its lines to; the rest of observability reads every layer (below)
  ['observability/logger.ts'],
  ['security'],
  ['identity'],
  ['registrations'],
  ['chat'],
  ['validation'],
  ['auth'],
  // people as operators see them: the audit trail, roles, blocks, erasure, export, API keys
  // (the OpenID logins they end are handed in as auth/sessions.ts's LinkedLogins)
  ['accounts'],
  ['messaging'],
  // the workers reach sockets through realtime's notifier
  ['realtime'],
  ['queues'],
  // the OpenID logins' store: a sign-out ends them without the provider
  ['oidc/logins.ts'],
  ['services.ts'],
  // metrics implement the lower layers' hooks (ProbeSink, the inbound worker's outcomes)
  ['observability'],
  ['openapi'],
  ['http'],
  ['demo'],
  ['oidc'],
  ['bin'],
];

/**
 * Upward imports kept on purpose, `from → to` (paths under src/), each with why. None today: a
 * new one needs a reason a reviewer accepts, and docs/development.md says which.
 */
const EXCEPTIONS: Record<string, string> = {};

const SRC = path.join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') ? [path.relative(SRC, full).split(path.sep).join('/')] : [];
  });
}

/** `import … from './x.js'`, `export … from './x.js'`, `import('./x.js')`: relative ones only. */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] ?? m[2]!));
    return target.replace(/\.js$/, '.ts');
  });
}

function layerOf(file: string): number {
  const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : file;
  const own = LAYERS.findIndex((l) => l.includes(file));
  const layer = own >= 0 ? own : LAYERS.findIndex((l) => l.includes(folder));
  if (layer < 0) throw new Error(`src/${file} is in no layer: add its folder to LAYERS and docs/development.md`);
  return layer;
}

type Edge = { from: string; to: string };

/** `from → to` of each import into a higher layer that EXCEPTIONS does not list. */
function upward(edges: Edge[]): string[] {
  return edges
    .filter(({ from, to }) => layerOf(to) > layerOf(from))
    .map(({ from, to }) => `${from} → ${to}`)
    .filter((k) => !(k in EXCEPTIONS));
}

/** Each import circle, as the trail of files that closes it. */
function circles(files: string[], edges: Edge[]): string[] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map<string, 'open' | 'done'>();
  const found: string[] = [];
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      found.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const to of next.get(file) ?? []) visit(to, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  return [...new Set(found)];
}

describe('ops: dependencies point down', function () {
  const files = sources(SRC);
  const edges: Edge[] = files.flatMap((from) =>
    importsOf(from)
      .filter((to) => !to.startsWith('../'))
      .map((to) => ({ from, to })),
  );

  it('reads the import lines (the known exceptions are found)', function () {
    expect(edges.length).to.be.greaterThan(300);
    const seen = new Set(edges.map((e) => `${e.from} → ${e.to}`));
    const stale = Object.keys(EXCEPTIONS).filter((k) => !seen.has(k));
    expect(stale, 'exceptions no longer imported: remove them').to.deep.equal([]);
  });

  it('no module imports from a layer above its own, except the listed ones', function () {
    expect(upward(edges), 'move the shared type or function down to the layer that owns it, or declare an interface below').to.deep.equal([]);
  });

  it('no import circles', function () {
    expect(circles(files, edges)).to.deep.equal([]);
  });

  it('would see an upward import and a circle (the checks can fail)', function () {
    // a lower layer reaching the service bag, as six queues/ and realtime/ modules once did
    const wrong = [
      { from: 'queues/worker-host.ts', to: 'services.ts' },
      { from: 'config.ts', to: 'key-material.ts' },
      { from: 'key-material.ts', to: 'config.ts' },
    ];
    expect(upward(wrong)).to.deep.equal(['queues/worker-host.ts → services.ts']);
    expect(circles(['config.ts'], wrong)).to.deep.equal(['config.ts → key-material.ts → config.ts']);
  });
});
