import { randomBytes } from 'node:crypto';
import { requestIdFrom } from '../../src/http/middleware/request-context.js';
import { createIntake } from '../../src/messaging/intake.js';
import { normaliseWebhook } from '../../src/messaging/inbound.js';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { createProcessMetrics } from '../../src/observability/metrics.js';
import type { InboundMessage } from '../../src/queues/jobs.js';
import { Scripts } from '../../src/redis/scripts.js';
import { benchRedis, cleanPrefix } from './redis.js';
import { emojiFor, evolutionBody, signWebhook } from './payloads.js';
import { textTable } from './report.js';

/**
 * `npm run bench:webhook-parts [-- <repetitions>]`: the CPU of each part of a webhook's work
 * that bare Koa does not do, measured alone in one warmed process on the benchmark's own bodies
 * (Evolution `messages.upsert`, 651 bytes, signed): the HMAC check, normalising the event, the
 * intake entry's JSON, the request metric, the request id; and the intake write through the
 * service's own intake and script against the Redis at REDIS_URL, per message at several batch
 * sizes (one write and one reply per batch, as one event-loop turn's webhooks make; the entry's
 * JSON is inside that figure too, shown on its own only to say how much of it it is). Read
 * beside the ingestion round's web CPU per webhook and bare Koa's: it says which part of the
 * difference is which. Absolute figures move with the VM's speed; compare within one run.
 */
const args = process.argv.slice(2);
const repetitions = Number(args[0] ?? 200_000);
if (!Number.isInteger(repetitions) || repetitions < 100) {
  process.stderr.write('usage: npm run bench:webhook-parts [-- <repetitions, at least 100>]\n');
  process.exit(2);
}
/** Intake batch sizes: 1 (a lone webhook), what 32 connections give a turn (5–6), and larger. */
const BATCHES = [1, 3, 6, 12, 32];
const SECRET = randomBytes(16).toString('hex');

interface Body {
  raw: Buffer;
  signature: string;
  parsed: unknown;
  message: InboundMessage;
}

const bodies: Body[] = Array.from({ length: 1000 }, (_, i) => {
  const signed = signWebhook(evolutionBody(i, emojiFor(i)), SECRET);
  const parsed: unknown = JSON.parse(signed.body);
  const normalised = normaliseWebhook(parsed);
  if (normalised.kind !== 'messages' || normalised.messages.length !== 1) throw new Error('the benchmark body did not normalise to one message');
  return { raw: Buffer.from(signed.body), signature: signed.headers['x-hub-signature-256']!, parsed, message: normalised.messages[0]! };
});

const auth = new WebhookAuth({ secret: SECRET, jwtKey: undefined });
const metrics = createProcessMetrics({ web: true, worker: false });
let sink = 0;

const parts: Array<[string, (b: Body) => void]> = [
  ['HMAC-SHA256 check of the body', (b) => {
    if (!auth.verify(b.raw, { signature: b.signature, authorization: undefined, pathSecret: undefined })) throw new Error('signature refused');
  }],
  ['body to text and JSON.parse (bare Koa does it too)', (b) => {
    sink += (JSON.parse(b.raw.toString('utf8')) as { instance: string }).instance.length;
  }],
  ['normalising the event', (b) => {
    const n = normaliseWebhook(b.parsed);
    sink += n.kind === 'messages' ? n.messages.length : 0;
  }],
  ['the intake entry\'s JSON', (b) => {
    sink += JSON.stringify({ message: b.message, nonce: 'abcdefghijkl12', receivedAt: Date.now() }).length;
  }],
  ['the request metric (histogram)', () => metrics.web.requestDone('POST', '/messaging-endpoint', 200, 0.0012)],
  ['a request id', () => {
    sink += requestIdFrom(undefined).length;
  }],
];

/** CPU µs per call of `fn`, after a warm-up, the last of three rounds. */
function perCall(fn: (b: Body) => void): number {
  let last = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < Math.min(20_000, repetitions); i++) fn(bodies[i % bodies.length]!);
    const start = process.cpuUsage();
    for (let i = 0; i < repetitions; i++) fn(bodies[i % bodies.length]!);
    const used = process.cpuUsage(start);
    last = (used.user + used.system) / repetitions;
  }
  return last;
}

const rows: string[][] = parts.map(([name, fn]) => [name, perCall(fn).toFixed(2)]);

const redis = benchRedis();
const prefix = `bench-parts-${randomBytes(4).toString('hex')}`;
try {
  const scripts = new Scripts(redis);
  const key = `${prefix}:intake`;
  const messages = Math.max(600, Math.min(60_000, Math.floor(repetitions / 4)));
  for (const batch of BATCHES) {
    const intake = createIntake((entries) => scripts.run('intake-push', [key, ...entries]));
    const send = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i += batch) await Promise.all(Array.from({ length: batch }, (_, j) => intake.add(bodies[(i + j) % bodies.length]!.message, Date.now())));
    };
    await send(Math.min(12_000, messages));
    await redis.del(key);
    const start = process.cpuUsage();
    await send(messages);
    const used = process.cpuUsage(start);
    // every message is in the stream, or the figure is not what it says
    const sent = Math.ceil(messages / batch) * batch;
    const written = await redis.xlen(key);
    if (written !== sent) throw new Error(`intake, ${batch} a batch: ${written} of ${sent} messages in the stream`);
    await redis.del(key);
    rows.push([`intake write, ${batch} a batch (per message; system time)`, `${((used.user + used.system) / sent).toFixed(2)} (${(used.system / sent).toFixed(2)})`]);
  }
} finally {
  await cleanPrefix(redis, prefix);
  redis.disconnect();
}

process.stdout.write(`\nCPU µs per webhook of each part, alone in one warmed process (${repetitions.toLocaleString('en-US')} repetitions; body ${bodies[0]!.raw.length} bytes)\n`);
process.stdout.write(textTable(['part', 'µs'], rows) + '\n');
// read once, so that V8 cannot drop the measured work as unused
if (sink < 0) process.stdout.write('\n');
