import { expect } from 'chai';
import type { Job, Queue } from 'bullmq';
import { evolutionMessage, startMockGateway, type MockGateway, type RecordedRequest } from '../helpers/gateway.js';
import { fullLogin, randomEmoji, randomPhone } from '../helpers/flow.js';
import { eventually, post } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { postWebhook, queueOf, settled } from './support.js';

const digits = (phone: string): string => phone.replace(/^\+/, '');

/** Waits until the job has finished for good, and returns it with its final state. */
async function finished(queue: Queue, id: string): Promise<{ job: Job; state: string }> {
  return eventually(async () => {
    const job = await queue.getJob(id);
    const state = job ? await job.getState() : 'missing';
    return job && (state === 'completed' || state === 'failed') ? { job, state } : undefined;
  }, 15000, 100);
}

const sentWith = (gw: MockGateway, text: string): RecordedRequest[] =>
  gw.requests.filter((r) => JSON.stringify(r.json).includes(JSON.stringify(text)));

describe('messaging: outbound through the gateways (retries, limiter, replies)', function () {
  describe('Evolution API provider', function () {
    let gw: MockGateway;
    let stack: Stack;
    let outbound: Queue;
    let inbound: Queue;
    let token: string;

    before(async function () {
      this.timeout(30000);
      gw = await startMockGateway();
      stack = await startStack({
        name: 'outbound-evo',
        env: {
          MESSAGING_PROVIDER: 'evolution',
          EVOLUTION_API_URL: gw.url,
          EVOLUTION_API_KEY: 'evo-api-key',
          EVOLUTION_INSTANCE: 'pin auth',
          OUTBOUND_PER_SECOND: '2',
          OUTBOUND_ATTEMPTS: '4',
          REPLY_SIGNED_IN: 'Welcome back ✅',
          REPLY_UNKNOWN_CODE: 'No such code, sorry',
          RATE_REPLY_PER_MINUTE: '2',
        },
      });
      outbound = queueOf(stack.prefix, 'outbound');
      inbound = queueOf(stack.prefix, 'inbound');
    });
    after(async function () {
      this.timeout(30000);
      await outbound?.close();
      await inbound?.close();
      await stack?.stop();
      await gw?.close();
    });

    async function send(text: string, phone = randomPhone()): Promise<string> {
      const r = await post(stack.url, '/send-message', { phoneNumber: phone, message: text }, token);
      expect(r.status, r.text).to.equal(200);
      return String(r.body.messageId);
    }

    it('answers a login in the chat with the configured text, as Evolution expects it', async function () {
      const phone = randomPhone();
      const { login } = await fullLogin(stack.url, { phone });
      token = login.token;
      await settled(outbound);
      const [req] = sentWith(gw, 'Welcome back ✅');
      expect(req, JSON.stringify(gw.requests.map((r) => r.json))).to.not.equal(undefined);
      expect(req!.method).to.equal('POST');
      expect(req!.url).to.equal('/message/sendText/pin%20auth');
      expect(req!.headers.apikey).to.equal('evo-api-key');
      expect(req!.json).to.deep.equal({ number: digits(phone), text: 'Welcome back ✅' });
    });

    it('answers an unknown code, at most RATE_REPLY_PER_MINUTE times per phone, and ignores plain chat', async function () {
      const phone = randomPhone();
      const unknown = `PIN: ${randomEmoji()}`;
      for (const text of [unknown, unknown, unknown, 'hello, is anyone there?']) {
        const r = await postWebhook(stack.url, JSON.stringify(evolutionMessage({ text, phone })));
        expect(r.status, r.text).to.equal(200);
      }
      await settled(inbound);
      await settled(outbound);
      const replies = gw.requests.filter((r) => (r.json as { number?: string }).number === digits(phone));
      expect(replies.map((r) => (r.json as { text: string }).text)).to.deep.equal(['No such code, sorry', 'No such code, sorry']);
    });

    it('retries after a 503 and delivers', async function () {
      gw.queue.push({ status: 503, body: { status: 503, error: 'Service Unavailable' } });
      const id = await send('retry after 503');
      const { job, state } = await finished(outbound, id);
      expect(state).to.equal('completed');
      expect(job.attemptsMade).to.equal(2);
      expect(sentWith(gw, 'retry after 503')).to.have.length(2);
    });

    it("retries after a 429 no sooner than the gateway's Retry-After", async function () {
      gw.queue.push({ status: 429, headers: { 'retry-after': '2' }, body: { status: 429, error: 'Too Many Requests' } });
      const id = await send('retry after 429');
      const { state } = await finished(outbound, id);
      expect(state).to.equal('completed');
      const [first, second] = sentWith(gw, 'retry after 429');
      expect(second, 'a second attempt').to.not.equal(undefined);
      expect(second!.at - first!.at).to.be.at.least(1900);
    });

    it('does not retry after a 400, and the failed job keeps the reason', async function () {
      gw.queue.push({ status: 400, body: { status: 400, error: 'Bad Request', response: { message: [{ exists: false, jid: 'x@s.whatsapp.net', number: 'x' }] } } });
      const id = await send('rejected with 400');
      const { job, state } = await finished(outbound, id);
      expect(state).to.equal('failed');
      expect(job.failedReason).to.match(/400.*not on WhatsApp/);
      expect(job.attemptsMade).to.equal(1);
      expect(sentWith(gw, 'rejected with 400')).to.have.length(1);
    });

    it('keeps under OUTBOUND_PER_SECOND across the queue (2/s: six messages take over two seconds)', async function () {
      const texts = Array.from({ length: 6 }, (_, i) => `limited ${i}`);
      const ids = await Promise.all(texts.map((t) => send(t)));
      for (const id of ids) expect((await finished(outbound, id)).state).to.equal('completed');
      const times = texts.map((t) => sentWith(gw, t)[0]!.at).sort((a, b) => a - b);
      expect(times[5]! - times[0]!).to.be.at.least(1800);
    });
  });

  describe('WhatsApp Cloud API provider', function () {
    let gw: MockGateway;
    let stack: Stack;
    let outbound: Queue;
    let inbound: Queue;
    let token: string;
    const graphError = (code: number, message: string) => ({
      status: 400,
      body: { error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: message }, fbtrace_id: 'Az' } },
    });

    before(async function () {
      this.timeout(30000);
      gw = await startMockGateway();
      gw.fallback = { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: 'x', wa_id: 'x' }], messages: [{ id: 'wamid.MOCK' }] } };
      stack = await startStack({
        name: 'outbound-cloud',
        env: {
          MESSAGING_PROVIDER: 'cloud',
          WHATSAPP_TOKEN: 'graph-token',
          WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
          GRAPH_API_URL: `${gw.url}/v21.0`,
          CHAT_REPLIES: 'false',
        },
      });
      outbound = queueOf(stack.prefix, 'outbound');
      inbound = queueOf(stack.prefix, 'inbound');
      token = (await fullLogin(stack.url)).login.token;
    });
    after(async function () {
      this.timeout(30000);
      await outbound?.close();
      await inbound?.close();
      await stack?.stop();
      await gw?.close();
    });

    async function send(text: string, phone = randomPhone()): Promise<string> {
      const r = await post(stack.url, '/send-message', { phoneNumber: phone, message: text }, token);
      expect(r.status, r.text).to.equal(200);
      return String(r.body.messageId);
    }

    it('sends no chat reply when CHAT_REPLIES=false', async function () {
      await settled(inbound);
      await settled(outbound);
      expect(gw.requests).to.have.length(0);
    });

    it('posts to /{phone number id}/messages with the bearer token and the text body', async function () {
      const phone = randomPhone();
      const id = await send('hello from the cloud 👋', phone);
      expect((await finished(outbound, id)).state).to.equal('completed');
      const [req] = sentWith(gw, 'hello from the cloud 👋');
      expect(req!.method).to.equal('POST');
      expect(req!.url).to.equal('/v21.0/106540352242922/messages');
      expect(req!.headers.authorization).to.equal('Bearer graph-token');
      expect(req!.json).to.deep.include({ messaging_product: 'whatsapp', to: digits(phone), type: 'text', text: { body: 'hello from the cloud 👋' } });
    });

    it('fails for good outside the 24-hour window (131047), saying so', async function () {
      gw.queue.push(graphError(131047, '(#131047) Re-engagement message'));
      const id = await send('outside the window');
      const { job, state } = await finished(outbound, id);
      expect(state).to.equal('failed');
      expect(job.failedReason).to.include('131047').and.to.include('24-hour customer service window');
      expect(sentWith(gw, 'outside the window')).to.have.length(1);
    });

    it('retries a throughput limit (130429) although Meta answers it with HTTP 400', async function () {
      gw.queue.push(graphError(130429, '(#130429) Rate limit hit'));
      const id = await send('throughput limited');
      expect((await finished(outbound, id)).state).to.equal('completed');
      expect(sentWith(gw, 'throughput limited')).to.have.length(2);
    });
  });
});
