/**
 * A quick local measurement of the webhook's accept path (not the project's benchmark): one web
 * node with no workers against a bare Koa + koa-bodyparser server answering 200 to the same
 * bodies, in interleaved rounds, reporting medians of requests a second and of the server's
 * CPU time per request (steadier than throughput on a shared machine).
 * After a build: `node dist/test/messaging/accept-path.bench.js [rounds] [seconds] [connections]`.
 * Every body is a distinct Evolution message (autocannon replaces `[<id>]` per request), so the
 * web node really stores each one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { evolutionMessage } from '../helpers/gateway.js';
import { freePort, ROOT, startProcess, stopProcess } from '../helpers/processes.js';
import { cleanPrefix, uniquePrefix } from '../helpers/redis.js';

const rounds = Number(process.argv[2] ?? 5);
const seconds = Number(process.argv[3] ?? 6);
const connections = Number(process.argv[4] ?? 50);
const body = JSON.stringify(evolutionMessage({ text: 'PIN: 🍎🚀🐱🐶', id: '[<id>]', phone: '+5511987654321' }));

const BARE = `
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
const app = new Koa();
app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb' }));
app.use((ctx) => { ctx.body = { received: true }; });
app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('web listening'));
`;

/** CPU time (user + system) a process has used, in ms (Linux). */
function cpuMs(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function load(url: string, duration: number): Promise<number> {
  const result = await autocannon({
    url: `${url}/messaging-endpoint`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    idReplacement: true,
    connections,
    duration,
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) console.warn(`  ${bad} requests did not answer 2xx`);
  return result.requests.total;
}

/** Warms up, then measures one run: requests a second and µs of server CPU a request. */
async function measure(url: string, child: ChildProcess): Promise<{ rps: number; cpuUs: number }> {
  await load(url, 2);
  const before = cpuMs(child);
  const total = await load(url, seconds);
  return { rps: total / seconds, cpuUs: ((cpuMs(child) - before) * 1000) / total };
}

async function bare() {
  const port = await freePort();
  const child = spawn('node', ['--input-type=module', '-e', BARE], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  try {
    return await measure(`http://127.0.0.1:${port}`, child);
  } finally {
    child.kill();
  }
}

async function web() {
  const prefix = uniquePrefix('accept-bench');
  const node = await startProcess('web', { KEY_PREFIX: prefix });
  try {
    return await measure(node.url, node.child);
  } finally {
    await stopProcess(node);
    await cleanPrefix(prefix);
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const runs = { bare: [] as { rps: number; cpuUs: number }[], web: [] as { rps: number; cpuUs: number }[] };
for (let i = 0; i < rounds; i++) {
  runs.bare.push(await bare());
  runs.web.push(await web());
  console.log(`round ${i + 1}: bare ${Math.round(runs.bare[i]!.rps)} req/s, web ${Math.round(runs.web[i]!.rps)} req/s`);
}
for (const [name, r] of Object.entries(runs)) {
  console.log(`${name}: median ${Math.round(median(r.map((x) => x.rps)))} req/s, ${median(r.map((x) => x.cpuUs)).toFixed(1)} µs CPU a request`);
}
console.log(`ratio web / bare: ${(median(runs.web.map((x) => x.rps)) / median(runs.bare.map((x) => x.rps))).toFixed(2)}`);
