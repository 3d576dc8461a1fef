import { expect } from 'chai';
import type { Job, Queue } from 'bullmq';
import { evolutionMessage, startMockGateway, type MockGateway, type RecordedRequest } from '../helpers/gateway.js';
import { fullLogin, randomEmoji, randomPhone } from '../helpers/flow.js';
import { eventually, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { postWebhook, queueOf, settled } from './support.js';

const digits = (phone: string): string => phone.replace(/^\+/, '');

/** Waits until the job has finished for good, and returns it with its final state. */
async function finished(queue: Queue, id: string): Promise<{ job: Job; state: string }> {
  const state = await eventually(
    async () => {
      const s = await queue.getJobState(id);
      return s === 'completed' || s === 'failed' ? s : undefined;
    },
    15000,
    100,
  );
  // read after the state is final, so failedReason and attemptsMade are too
  return { job: (await queue.getJob(id))!, state };
}

/** Requests that carried `text` at the end of a string (a /send-message text follows its heading). */
const sentWith = (gw: MockGateway, text: string): RecordedRequest[] =>
  gw.requests.filter((r) => JSON.stringify(r.json).includes(JSON.stringify(text).slice(1)));

/** A stack whose workers talk to a mock gateway; hooks start and stop both around the suite. */
function gatewayStack(name: string, env: (gatewayUrl: string) => Record<string, string>, prepare: (gw: MockGateway) => void = () => undefined) {
  const ctx = {} as { gw: MockGateway; stack: InProcessStack; outbound: Queue; inbound: Queue; token: string };
  before(async function () {
    this.timeout(120000);
    ctx.gw = await startMockGateway();
    prepare(ctx.gw);
    ctx.stack = await startStack({ inProcess: true, name, env: env(ctx.gw.url) });
    ctx.outbound = queueOf(ctx.stack.prefix, 'outbound');
    ctx.inbound = queueOf(ctx.stack.prefix, 'inbound');
  });
  after(async function () {
    this.timeout(30000);
    await ctx.outbound?.close();
    await ctx.inbound?.close();
    await ctx.stack?.stop();
    await ctx.gw?.close();
  });
  /** Queues a message through /send-message (needs ctx.token) and returns its job id. */
  const send = async (text: string, phone = randomPhone()): Promise<string> => {
    const r = await post(ctx.stack.url, '/send-message', { phoneNumber: phone, message: text }, ctx.token);
    expect(r.status, r.text).to.equal(200);
    return String(r.body.messageId);
  };
  return { ctx, send };
}

/** The configured text, then the undo hint every login reply carries. */
const SIGNED_IN_REPLY = 'Welcome back ✅ Not you? Reply STOP to sign out everywhere.';

describe('messaging: outbound through the gateways (retries, limiter, replies)', function () {
  describe('Evolution API provider', function () {
    const { ctx, send } = gatewayStack('outbound-evo', (url) => ({
      MESSAGING_PROVIDER: 'evolution',
      EVOLUTION_API_URL: url,
      EVOLUTION_API_KEY: 'evo-api-key',
      EVOLUTION_INSTANCE: 'pin auth',
      OUTBOUND_PER_SECOND: '2',
      OUTBOUND_ATTEMPTS: '4',
      REPLY_SIGNED_IN: 'Welcome back ✅',
      REPLY_UNKNOWN_CODE: 'No such code, sorry',
      RATE_REPLY_PER_MINUTE: '2',
    }));

    it('answers a login in the chat with the configured text and how to undo it, as Evolution expects it', async function () {
      const phone = randomPhone();
      const { login } = await fullLogin(ctx.stack.url, { phone });
      ctx.token = login.token;
      // the reply is queued just after the login is stored, so it may come a moment after check-login
      const [req] = await eventually(async () => {
        const seen = sentWith(ctx.gw, SIGNED_IN_REPLY);
        return seen.length > 0 ? seen : undefined;
      });
      expect(req!.method).to.equal('POST');
      // on the instance the message came on (the test helper's), not the configured one
      expect(req!.url).to.equal('/message/sendText/test-instance');
      expect(req!.headers.apikey).to.equal('evo-api-key');
      expect(req!.json).to.deep.equal({ number: digits(phone), text: SIGNED_IN_REPLY });
    });

    it('answers an unknown code, at most RATE_REPLY_PER_MINUTE times per phone, and ignores plain chat', async function () {
      const phone = randomPhone();
      const unknown = `PIN: ${randomEmoji()}`;
      for (const text of [unknown, unknown, unknown, 'hello, is anyone there?']) {
        const r = await postWebhook(ctx.stack.url, JSON.stringify(evolutionMessage({ text, phone })));
        expect(r.status, r.text).to.equal(200);
      }
      await settled(ctx.inbound);
      await settled(ctx.outbound);
      const replies = ctx.gw.requests.filter((r) => (r.json as { number?: string }).number === digits(phone));
      expect(replies.map((r) => (r.json as { text: string }).text)).to.deep.equal(['No such code, sorry', 'No such code, sorry']);
    });

    it('retries after a 503 and delivers', async function () {
      ctx.gw.queue.push({ status: 503, body: { status: 503, error: 'Service Unavailable' } });
      const id = await send('retry after 503');
      const { job, state } = await finished(ctx.outbound, id);
      expect(state).to.equal('completed');
      expect(job.attemptsMade).to.equal(2);
      expect(sentWith(ctx.gw, 'retry after 503')).to.have.length(2);
    });

    it("retries after a 429 no sooner than the gateway's Retry-After, and holds the other messages as long", async function () {
      ctx.gw.queue.push({ status: 429, headers: { 'retry-after': '2' }, body: { status: 429, error: 'Too Many Requests' } });
      const id = await send('retry after 429');
      const [first] = await eventually(async () => {
        const seen = sentWith(ctx.gw, 'retry after 429');
        return seen.length > 0 ? seen : undefined;
      });
      const other = await send('sent while held');
      for (const job of [id, other]) expect((await finished(ctx.outbound, job)).state).to.equal('completed');
      const [, second] = sentWith(ctx.gw, 'retry after 429');
      expect(second, 'a second attempt').to.not.equal(undefined);
      expect(second!.at - first!.at).to.be.at.least(1900);
      expect(sentWith(ctx.gw, 'sent while held')[0]!.at - first!.at).to.be.at.least(1900);
    });

    it('does not retry after a 400, and the failed job keeps the reason', async function () {
      ctx.gw.queue.push({
        status: 400,
        body: { status: 400, error: 'Bad Request', response: { message: [{ exists: false, jid: 'x@s.whatsapp.net', number: 'x' }] } },
      });
      const id = await send('rejected with 400');
      const { job, state } = await finished(ctx.outbound, id);
      expect(state).to.equal('failed');
      expect(job.failedReason).to.match(/400.*not on WhatsApp/);
      expect(job.attemptsMade).to.equal(1);
      expect(sentWith(ctx.gw, 'rejected with 400')).to.have.length(1);
    });

    it('keeps under OUTBOUND_PER_SECOND across the queue (2/s: six messages take over two seconds)', async function () {
      const texts = Array.from({ length: 6 }, (_, i) => `limited ${i}`);
      const ids = await Promise.all(texts.map((t) => send(t)));
      for (const id of ids) expect((await finished(ctx.outbound, id)).state).to.equal('completed');
      const times = texts.map((t) => sentWith(ctx.gw, t)[0]!.at).sort((a, b) => a - b);
      expect(times[5]! - times[0]!).to.be.at.least(1800);
    });
  });

  describe('WhatsApp Cloud API provider', function () {
    const graphError = (code: number, message: string) => ({
      status: 400,
      body: { error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: message }, fbtrace_id: 'Az' } },
    });
    const { ctx, send } = gatewayStack(
      'outbound-cloud',
      (url) => ({
        MESSAGING_PROVIDER: 'cloud',
        WHATSAPP_TOKEN: 'graph-token',
        WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
        GRAPH_API_URL: `${url}/v21.0`,
        CHAT_REPLIES: 'false',
      }),
      (gw) => {
        gw.fallback = { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: 'x', wa_id: 'x' }], messages: [{ id: 'wamid.MOCK' }] } };
      },
    );
    before(async function () {
      this.timeout(120000);
      ctx.token = (await fullLogin(ctx.stack.url)).login.token;
    });

    it('sends no chat reply when CHAT_REPLIES=false', async function () {
      await settled(ctx.inbound);
      await settled(ctx.outbound);
      expect(ctx.gw.requests).to.have.length(0);
    });

    it('posts to /{phone number id}/messages with the bearer token and the text body', async function () {
      const phone = randomPhone();
      const id = await send('hello from the cloud 👋', phone);
      expect((await finished(ctx.outbound, id)).state).to.equal('completed');
      const [req] = sentWith(ctx.gw, 'hello from the cloud 👋');
      expect(req!.method).to.equal('POST');
      expect(req!.url).to.equal('/v21.0/106540352242922/messages');
      expect(req!.headers.authorization).to.equal('Bearer graph-token');
      expect(req!.json).to.deep.include({ messaging_product: 'whatsapp', to: digits(phone), type: 'text' });
      expect((req!.json as { text: { body: string } }).text.body).to.match(/^Message from .+\n\nhello from the cloud 👋$/u);
    });

    it('fails for good outside the 24-hour window (131047), saying so', async function () {
      ctx.gw.queue.push(graphError(131047, '(#131047) Re-engagement message'));
      const id = await send('outside the window');
      const { job, state } = await finished(ctx.outbound, id);
      expect(state).to.equal('failed');
      expect(job.failedReason).to.include('131047').and.to.include('24-hour customer service window');
      expect(sentWith(ctx.gw, 'outside the window')).to.have.length(1);
    });

    it('retries a throughput limit (130429) although Meta answers it with HTTP 400', async function () {
      ctx.gw.queue.push(graphError(130429, '(#130429) Rate limit hit'));
      const id = await send('throughput limited');
      expect((await finished(ctx.outbound, id)).state).to.equal('completed');
      expect(sentWith(ctx.gw, 'throughput limited')).to.have.length(2);
    });
  });
});
