import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { messageKey } from '../../src/messaging/inbound.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { inboundJobId } from '../../src/queues/intake.js';
import { jobCounts, postWebhook, queueOf } from './support.js';

const MESSAGES = 30;

/**
 * The webhook's 200 means the message is a job on the `inbound` queue: with no worker running
 * each accepted message waits there as one job under its message id (a gateway's redelivery is
 * the same job), and a worker started later completes every one of them once.
 */
describe('messaging: the webhook and the inbound job it adds', function () {
  let stack: InProcessStack;
  let inbound: Queue;

  before(async function () {
    stack = await startStack({ inProcess: true, name: 'intake', webs: 1, workers: 0, env: { CHAT_REPLIES: 'false' } });
    inbound = queueOf(stack.prefix, 'inbound');
  });
  after(async function () {
    await inbound?.close();
    await stack?.stop();
  });

  it("answers with the API's headers, X-Request-Id and error body", async function () {
    const ok = await postWebhook(stack.url, JSON.stringify(evolutionMessage({ text: 'hi', fromMe: true })), { 'x-request-id': 'gw-123' });
    const bad = await postWebhook(stack.url, '{"event":');
    const notJson = await postWebhook(stack.url, 'x', { 'content-type': 'text/plain' });
    const large = await postWebhook(stack.url, `{"x":"${'a'.repeat(1024 * 1024)}"}`);
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

  it('adds one job per accepted message before the 200, with no worker running, redeliveries included; a worker completes each once', async function () {
    this.timeout(30000);
    const bodies = Array.from({ length: MESSAGES }, (_, i) => JSON.stringify(evolutionMessage({ text: 'hello', id: `ACCEPT-${i}` })));
    for (const raw of bodies) expect((await postWebhook(stack.url, raw)).status).to.equal(200);
    // the first message's job, as the 200 found it: its data is the accepted message
    const first = await inbound.getJob(inboundJobId(messageKey('evolution', 'test-instance', 'ACCEPT-0')));
    expect(first, 'the job of the first message').to.not.equal(undefined);
    const data = first!.data as InboundJob;
    expect(data.message.text).to.equal('hello');
    expect(data.nonce).to.be.a('string').and.not.equal('');
    expect(data.receivedAt).to.be.within(Date.now() - 60_000, Date.now());
    // a redelivery of the first message: the same job, kept once with its first nonce
    expect((await postWebhook(stack.url, bodies[0]!)).status).to.equal(200);
    expect((await inbound.getJobCounts('waiting')).waiting).to.equal(MESSAGES);
    expect(((await inbound.getJob(first!.id!))!.data as InboundJob).nonce).to.equal(data.nonce);

    await stack.addWorker();
    const counts = await eventually(
      async () => {
        const c = await jobCounts(inbound);
        return c.pending === 0 && c.completed >= MESSAGES ? c : undefined;
      },
      20000,
      100,
    );
    expect(counts).to.include({ completed: MESSAGES, failed: 0, total: MESSAGES });
  });
});
