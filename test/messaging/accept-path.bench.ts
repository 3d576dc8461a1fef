/**
 * A quick local measurement of the webhook's accept path (not the project's benchmark): one web
 * node, no workers, against a bare Koa + koa-bodyparser server answering 200 to the same bodies.
 * Run after a build: `node dist/test/messaging/accept-path.bench.js [seconds] [connections]`.
 * Every body is a distinct Evolution message (autocannon replaces `[<id>]` per request), so the
 * web node really stores each one.
 */
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { evolutionMessage } from '../helpers/gateway.js';
import { freePort, ROOT, startProcess, stopProcess } from '../helpers/processes.js';
import { cleanPrefix, uniquePrefix } from '../helpers/redis.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const body = JSON.stringify(evolutionMessage({ text: 'PIN: 🍎🚀🐱🐶', id: '[<id>]', phone: '+5511987654321' }));

const BARE = `
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
const app = new Koa();
app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb' }));
app.use((ctx) => { ctx.body = { received: true }; });
app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('web listening'));
`;

async function load(url: string): Promise<number> {
  const result = await autocannon({
    url: url + '/messaging-endpoint',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    idReplacement: true,
    connections,
    duration: seconds,
  });
  const non2xx = result.non2xx + result.errors + result.timeouts;
  if (non2xx > 0) console.warn(`  ${non2xx} requests did not answer 2xx`);
  return result.requests.average;
}

async function bare(): Promise<number> {
  const port = await freePort();
  const child = spawn('node', ['--input-type=module', '-e', BARE], { cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  try {
    await load(`http://127.0.0.1:${port}`); // warm-up
    return await load(`http://127.0.0.1:${port}`);
  } finally {
    child.kill();
  }
}

async function web(): Promise<number> {
  const prefix = uniquePrefix('accept-bench');
  const node = await startProcess('web', { KEY_PREFIX: prefix, LOG_LEVEL: 'info' });
  try {
    await load(node.url);
    return await load(node.url);
  } finally {
    await stopProcess(node);
    await cleanPrefix(prefix);
  }
}

const b = await bare();
const w = await web();
console.log(`bare Koa + koa-bodyparser: ${Math.round(b)} req/s`);
console.log(`web node /messaging-endpoint: ${Math.round(w)} req/s`);
console.log(`ratio: ${(w / b).toFixed(2)}`);
