import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { answers, type Child } from './processes.js';
import { textTable } from './report.js';
import { closeAll, connect, connectAll } from './sockets.js';
import { Stack, stopOnInterrupt } from './stack.js';
import { sleep } from './stats.js';

/**
 * `npm run bench:connection-heap [-- <connections> [--idle=<seconds>]]`: what one idle Socket.IO
 * connection keeps in a web node's heap, by kind of object. A web node started as the benchmark
 * starts one (the Procfile's flags) writes a heap snapshot with one connection open, then another
 * after `connections` more have connected and stayed idle `idle` seconds (default 32: one ping
 * cycle, whose buffers and lists are then as they stay). The objects in the second snapshot that
 * were not in the first, divided by `connections`, are what a connection costs; what the burst
 * made once among them (compiled code, objects fewer than one per 100 connections) is left out
 * of the second total. A snapshot counts
 * live objects only, so the figure repeats from run to run, where the RSS of the benchmark's socket
 * curve moves with the garbage of the ping cycle: this is how a change to a connection's footprint
 * is judged. The second table names who holds the new objects (the retainer, and its retainer).
 */
const args = process.argv.slice(2);
const positional = args.filter((a) => !a.startsWith('--'));
const connections = Number(positional[0] ?? 2000);
const idleArg = args.find((a) => a.startsWith('--idle='))?.slice('--idle='.length) ?? '32';
const idleSeconds = Number(idleArg);
if (!Number.isInteger(connections) || connections < 10 || !/^\d+$/.test(idleArg)) {
  process.stderr.write('usage: npm run bench:connection-heap [-- <connections, at least 10> [--idle=<seconds>]]\n');
  process.exit(2);
}
const log = (message: string): void => {
  process.stderr.write(`[connection-heap] ${message}\n`);
};

/** The parts of V8's heap snapshot format read here (its `snapshot.meta` names the fields). */
interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Sends the signal the node was started to answer with a snapshot, and reads the file once the node answers again. */
async function snapshot(web: Child, dir: string): Promise<HeapSnapshot> {
  const before = new Set(readdirSync(dir));
  web.child.kill('SIGUSR2');
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    await sleep(250);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // the snapshot is written on the node's main thread: once it answers, the file is whole
    if (file && (await answers(`${web.url}/health`).catch(() => false))) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      rmSync(path.join(dir, file));
      return JSON.parse(text) as HeapSnapshot;
    }
  }
  throw new Error(`no heap snapshot from ${web.name} within 120 s:\n${web.tail()}`);
}

/** The kind every piece of compiled code is counted under: made once by the burst, not per connection. */
const CODE = 'compiled code (once, not per connection)';

/** A node's kind as the tables print it: strings, code and arrays by type, objects by constructor. */
function kindOf(type: string, name: string): string {
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return 'string';
  if (type === 'code') return CODE;
  if (type === 'array' || type === 'hidden') return `${type} ${name.replace(/^system \/ /, '').slice(0, 40)}`.trim();
  if (type === 'closure') return name ? `closure ${name.slice(0, 40)}` : 'closure';
  return `${type} ${name.slice(0, 40)}`;
}

interface Totals {
  count: number;
  bytes: number;
}

/** The objects of `after` that `before` does not have, by kind and by holder. */
function newObjects(before: HeapSnapshot, after: HeapSnapshot): { byKind: Map<string, Totals>; byHolder: Map<string, Totals> } {
  const meta = after.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const field = (name: string): number => meta.node_fields.indexOf(name);
  const [TYPE, NAME, ID, SIZE, EDGES] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(field) as [number, number, number, number, number];
  const [ETYPE, ENAME, ETO] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
  const types = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const oldIds = new Set<number>();
  const bnf = before.snapshot.meta.node_fields.length;
  const bid = before.snapshot.meta.node_fields.indexOf('id');
  for (let i = 0; i < before.nodes.length; i += bnf) oldIds.add(before.nodes[i + bid]!);
  // node ids are stable within a process: a node of `after` is new when `before` lacks its id
  const fresh = new Uint8Array(after.nodes.length / nf);
  for (let n = 0; n < after.nodes.length; n += nf) fresh[n / nf] = oldIds.has(after.nodes[n + ID]!) ? 0 : 1;

  const label = (n: number): string => kindOf(types[after.nodes[n + TYPE]!]!, after.strings[after.nodes[n + NAME]!]!);
  // each new node's first strong retainer (an ordinary one over V8's internal links when both hold it)
  const holder = new Map<number, [number, string]>();
  for (let n = 0, e = 0; n < after.nodes.length; n += nf) {
    for (let k = 0; k < after.nodes[n + EDGES]!; k++, e += ef) {
      const to = after.edges[e + ETO]!;
      const kind = edgeTypes[after.edges[e + ETYPE]!];
      if (kind === 'weak' || kind === 'shortcut' || !fresh[to / nf]) continue;
      const edge = kind === 'element' ? '[]' : kind === 'hidden' ? '(internal)' : String(after.strings[after.edges[e + ENAME]!]);
      if (!holder.has(to) || kind !== 'hidden') holder.set(to, [n, edge]);
    }
  }
  const byKind = new Map<string, Totals>();
  const byHolder = new Map<string, Totals>();
  const add = (into: Map<string, Totals>, key: string, bytes: number): void => {
    const t = into.get(key) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += bytes;
    into.set(key, t);
  };
  for (let n = 0; n < after.nodes.length; n += nf) {
    if (!fresh[n / nf]) continue;
    const bytes = after.nodes[n + SIZE]!;
    add(byKind, label(n), bytes);
    const held = holder.get(n);
    if (!held) continue;
    const [parent, edge] = held;
    const grand = holder.get(parent);
    const path = `${grand ? `${label(grand[0])} .${grand[1]} → ` : ''}${label(parent)} .${edge} → ${label(n)}`;
    add(byHolder, path, bytes);
  }
  return { byKind, byHolder };
}

/**
 * Made once during the burst rather than per connection: compiled code, and any kind of object
 * fewer than one per 100 connections (e.g. a metrics histogram's native buffer).
 */
const madeOnce = (kind: string, t: Totals): boolean => kind === CODE || t.count < connections / 100;
const perConnection = (t: Totals): [string, string] => [(t.count / connections).toFixed(2), (t.bytes / connections).toFixed(0)];
const largest = (m: Map<string, Totals>, rows: number): Array<[string, Totals]> => [...m].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, rows);

const dir = mkdtempSync(path.join(tmpdir(), 'pin-auth-heap-'));
// on every way out, interrupted ones included (their handler ends with process.exit)
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
const stack = new Stack({ nodeArgs: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] });
const interrupt = stopOnInterrupt(stack, log);
const sockets: Awaited<ReturnType<typeof connectAll>> = [];
// written once the stack is stopped and its keys deleted, so a reader that closes the pipe early
// (`| head`) cannot cut the clean-up short
let report = '';
let failed = false;
try {
  await stack.startWebs(1);
  const web = stack.webs[0]!;
  log(`web node ${web.pid} under ${stack.prefix}; one connection, then the first snapshot`);
  // one connection first, so what the first one makes once (modules' lazy state) is not counted
  sockets.push(await connect(web.url));
  await sleep(1000);
  const before = await snapshot(web, dir);
  log(`${connections} connections, idle ${idleSeconds} s, then the second snapshot`);
  sockets.push(...(await connectAll([web.url], connections)));
  await sleep(idleSeconds * 1000);
  const after = await snapshot(web, dir);
  const { byKind, byHolder } = newObjects(before, after);
  const all = [...byKind.values()].reduce((a, t) => ({ count: a.count + t.count, bytes: a.bytes + t.bytes }), { count: 0, bytes: 0 });
  const once = [...byKind].filter(([k, t]) => madeOnce(k, t)).reduce((a, [, t]) => a + t.bytes, 0);
  report = [
    `heap a connection (${connections} connections, idle ${idleSeconds} s; prefix ${stack.prefix})`,
    `bytes a connection  ${(all.bytes / connections).toFixed(0)}`,
    `without what was made once  ${((all.bytes - once) / connections).toFixed(0)}`,
    '',
    textTable(['kind', 'a connection', 'bytes'], largest(byKind, 25).map(([k, t]) => [k, ...perConnection(t)])),
    '',
    textTable(['held by', 'a connection', 'bytes'], largest(byHolder, 20).map(([k, t]) => [k, ...perConnection(t)])),
    '',
  ].join('\n');
} catch (err) {
  failed = true;
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
} finally {
  closeAll(sockets);
  await stack.stop();
}
await interrupt.settle();
process.stdout.write(report, () => process.exit(failed ? 1 : 0));
