import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { keys } from '../../src/redis/keys.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { inboundJobId } from '../../src/messaging/intake.js';
import { jobCounts, postWebhook, queueOf } from './support.js';

const MESSAGES = 30;
/** messages whose jobs a "crashed" pump added without deleting their stream entries */
const HALF_MOVED = 10;

/**
 * The hop between the web and the queue: accepted messages wait in the intake stream while no
 * worker runs, and a pump that died between `addBulk` and deleting the entries (simulated here)
 * costs nothing: every message still becomes exactly one completed job.
 */
describe('messaging: the lean webhook handler, the intake stream and its pump', function () {
  let stack: Stack;
  let inbound: Queue;
  const redis = testRedis();

  before(async function () {
    stack = await startStack({ name: 'intake', webs: 1, workers: 0, env: { CHAT_REPLIES: 'false' } });
    inbound = queueOf(stack.prefix, 'inbound');
  });
  after(async function () {
    await inbound?.close();
    redis.disconnect();
    await stack?.stop();
  });

  it("answers outside Koa with the API's headers, X-Request-Id and error body", async function () {
    const ok = await postWebhook(stack.url, JSON.stringify(evolutionMessage({ text: 'hi', fromMe: true })), { 'x-request-id': 'gw-123' });
    const bad = await postWebhook(stack.url, '{"event":');
    const notJson = await postWebhook(stack.url, 'x', { 'content-type': 'text/plain' });
    const large = await postWebhook(stack.url, '{"x":"' + 'a'.repeat(1024 * 1024) + '"}');
    expect([ok.status, bad.status, notJson.status, large.status]).to.deep.equal([200, 400, 400, 200]);
    expect(ok.headers.get('x-request-id')).to.equal('gw-123');
    expect(large.body).to.include({ dropped: 'too-large' });
    for (const r of [ok, bad, notJson, large]) {
      expect(r.headers.get('content-security-policy')).to.equal("default-src 'none';frame-ancestors 'none'");
      expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(r.headers.get('x-request-id')).to.match(/^[\w:.-]+$/);
      expect(r.headers.get('content-type')).to.match(/^application\/json/);
    }
    for (const r of [bad, notJson]) expect(r.body).to.include({ success: false, error: 'VALIDATION_ERROR' });
  });

  it('keeps accepted messages in Redis with no worker, and a worker turns each into one job, half-moved batches and redeliveries included', async function () {
    this.timeout(30000);
    const stream = keys(stack.prefix).inboundIntake();
    const bodies = Array.from({ length: MESSAGES }, (_, i) => JSON.stringify(evolutionMessage({ text: 'hello', id: `PUMP-${i}` })));
    for (const raw of bodies) expect((await postWebhook(stack.url, raw)).status).to.equal(200);
    // a redelivery of the first message: a second entry, the same job id
    expect((await postWebhook(stack.url, bodies[0]!)).status).to.equal(200);
    expect(await redis.xlen(stream)).to.equal(MESSAGES + 1);
    expect((await inbound.getJobCounts('waiting')).waiting).to.equal(0);

    // what a pump that died after addBulk leaves: jobs in the queue, their entries still in the stream
    const entries = await redis.xrange(stream, '-', '+', 'COUNT', HALF_MOVED);
    const half = entries.map(([, fields]) => JSON.parse(fields[1]!) as InboundJob);
    await inbound.addBulk(half.map((data) => ({ name: 'message', data, opts: { jobId: inboundJobId(data.message.id) } })));

    await stack.addWorker();
    const counts = await eventually(async () => {
      const c = await jobCounts(inbound);
      return c.pending === 0 && c.completed >= MESSAGES ? c : undefined;
    }, 20000, 100);
    expect(counts).to.include({ completed: MESSAGES, failed: 0, total: MESSAGES });
    expect(await redis.xlen(stream)).to.equal(0);
  });
});
