import { expect } from 'chai';
import { fullLogin } from '../helpers/flow.js';
import { startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { eventually, post } from '../helpers/http.js';
import { stackQueue } from '../core/support.js';
import { startFaultStack, type FaultStack } from './support.js';

/**
 * An outbound job whose message the gateway accepted must not be sent again when the job is
 * run again: here the worker records the send (the record reaches Redis, its answer is held)
 * and is killed before the job completes; another worker takes the stalled job over and finds
 * the record. The Cloud API carries the job id back in its status webhooks
 * (biz_opaque_callback_data).
 */
describe('faults: outbound sends are not repeated once the gateway accepted them', function () {
  this.timeout(60000);
  let f: FaultStack;
  let gateway: MockGateway;
  before(async function () {
    gateway = await startMockGateway();
    f = await startFaultStack('faults-outbound', {
      MESSAGING_PROVIDER: 'cloud',
      WHATSAPP_TOKEN: 'test-token',
      WHATSAPP_PHONE_NUMBER_ID: '1234',
      GRAPH_API_URL: gateway.url,
      // a killed worker's job is taken over within seconds
      STALLED_INTERVAL_MS: '1000',
    });
    gateway.fallback = { status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.MOCKSENT' }] } };
  });
  after(async function () {
    await f?.stop();
    await gateway?.close();
  });

  it('a job taken over after the gateway accepted its message sends nothing; the request carried the job id as marker', async function () {
    const { login } = await fullLogin(f.stack.url);
    const text = `ledger-${Date.now()}`;
    // the worker's record of the send ('sent' with the gateway's id, delivery-apply): it runs, its answer is held...
    const held = f.proxy.delayReplyTo(/\$4\r\nsent\r\n[\s\S]*wamid\.MOCKSENT/, 10000);
    const sent = await post(f.stack.url, '/send-message', { phoneNumber: '+5511912345678', message: text }, login.token);
    expect(sent.status, sent.text).to.equal(200);
    await held;
    // ... and the worker dies before the job completes
    const first = f.stack.workers[0]!;
    first.child.kill('SIGKILL');
    await first.exited;
    f.stack.workers.splice(0, 1);
    const heir = await f.stack.addWorker();
    const queue = stackQueue(f.stack.prefix, 'outbound', f.redis.url);
    try {
      const job = await eventually(
        async () => {
          const j = await queue.getJob(String(sent.body.messageId));
          return j?.finishedOn ? j : undefined;
        },
        30000,
        200,
      );
      expect(job.returnvalue).to.deep.include({ providerMessageId: 'wamid.MOCKSENT' });
    } finally {
      await queue.close();
    }
    // the text goes out after its heading (chat/relay.ts)
    const sends = gateway.requests.filter((r) => (r.json as { text?: { body?: string } }).text?.body?.endsWith(`\n\n${text}`));
    expect(sends, 'requests to the gateway').to.have.length(1);
    expect((sends[0]!.json as Record<string, unknown>).biz_opaque_callback_data).to.equal(String(sent.body.messageId));
    expect(heir.output()).to.match(/already sent by an earlier attempt/);
  });
});
