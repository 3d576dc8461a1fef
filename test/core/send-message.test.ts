import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { fullLogin, type LoginBody } from '../helpers/flow.js';
import { startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { eventually, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { expectError, stackQueue } from './support.js';

/** POST /send-message → outbound queue → worker → Evolution API sendText on a mock gateway. */
describe('core: send-message through Evolution API', function () {
  let stack: InProcessStack;
  let gateway: MockGateway;
  let outbound: Queue;
  let login: LoginBody;
  before(async function () {
    gateway = await startMockGateway();
    stack = await startStack({
      inProcess: true,
      name: 'core-send',
      webs: 1,
      workers: 1,
      env: {
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: gateway.url,
        EVOLUTION_API_KEY: 'test-api-key',
        EVOLUTION_INSTANCE: 'my instance',
        CHAT_REPLIES: 'false',
      },
    });
    outbound = stackQueue(stack.prefix, 'outbound');
    login = (await fullLogin(stack.url, { pushName: 'Ada Lovelace' })).login;
  });
  after(async function () {
    await outbound?.close();
    await stack?.stop();
    await gateway?.close();
  });
  beforeEach(function () {
    gateway.requests.length = 0;
    gateway.queue.length = 0;
  });

  const send = (body: unknown, token = login.token) => post(stack.url, '/send-message', body, token);
  /** Waits for the job to end (completed or failed for good) and returns its state. */
  const finalState = (id: string): Promise<string> =>
    eventually(async () => {
      const state = await outbound.getJobState(id);
      return state === 'completed' || state === 'failed' ? state : undefined;
    }, 15000);

  it('posts {number, text} to /message/sendText/<instance> with the apikey header', async function () {
    const r = await send({ phoneNumber: '+5511912345678', message: 'Olá 👋 from the tests' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ success: true });
    expect(r.body.message).to.be.a('string');
    expect(r.body.messageId).to.be.a('string');
    expect(await finalState(String(r.body.messageId))).to.equal('completed');
    expect(gateway.requests).to.have.length(1);
    const req = gateway.requests[0]!;
    expect(req.method).to.equal('POST');
    expect(req.url).to.equal('/message/sendText/my%20instance');
    expect(req.headers.apikey).to.equal('test-api-key');
    expect(req.headers['content-type']).to.match(/^application\/json/);
    expect(req.json).to.have.all.keys('number', 'text');
    expect(req.json).to.include({ number: '5511912345678' });
    // headed by who sent it (chat/relay.ts)
    expect((req.json as { text: string }).text).to.equal(
      `Message from ${login.user.name} (${login.user.phone}), sent through pin-auth. It is not from pin-auth: pin-auth never asks you to send a code or to reply YES for someone else.\n\nOlá 👋 from the tests`,
    );
  });

  it('retries after a 503 from the gateway', async function () {
    gateway.queue.push({ status: 503, body: { error: 'busy' } });
    const r = await send({ phoneNumber: '+5511912345679', message: 'retry me' });
    expect(await finalState(String(r.body.messageId))).to.equal('completed');
    expect(gateway.requests).to.have.length(2);
    expect(gateway.requests[1]!.json).to.deep.equal(gateway.requests[0]!.json);
  });

  it('does not retry after a 400 from the gateway', async function () {
    gateway.queue.push({ status: 400, body: { status: 400, error: 'Bad Request', response: { message: [{ exists: false }] } } });
    const r = await send({ phoneNumber: '+5511912345670', message: 'no such number' });
    const id = String(r.body.messageId);
    expect(await finalState(id)).to.equal('failed');
    expect((await outbound.getJob(id))!.attemptsMade).to.equal(1);
    expect(gateway.requests).to.have.length(1);
  });

  it('validates phoneNumber (E.164) and message (1 to 4096 characters)', async function () {
    const ok = '+5511912345678';
    const bad: unknown[] = [
      {},
      { phoneNumber: ok },
      { message: 'hi' },
      { phoneNumber: 5511912345678, message: 'hi' },
      { phoneNumber: '5511912345678', message: 'hi' },
      { phoneNumber: '+123456', message: 'hi' },
      { phoneNumber: '+1234567890123456', message: 'hi' },
      { phoneNumber: '+0511912345678', message: 'hi' },
      { phoneNumber: '+55 11 91234-5678', message: 'hi' },
      { phoneNumber: ok, message: '' },
      { phoneNumber: ok, message: 'x'.repeat(4097) },
      { phoneNumber: ok, message: 42 },
    ];
    for (const body of bad) expectError(await send(body), 400, 'VALIDATION_ERROR');
    expect((await send({ phoneNumber: '+1234567', message: 'x'.repeat(4096) })).status).to.equal(200);
    expect(gateway.requests.filter((q) => (q.json as { number?: string }).number === '5511912345678')).to.have.length(0);
  });

  it('needs an access token', async function () {
    expectError(await send({ phoneNumber: '+5511912345678', message: 'hi' }, ''), 401, 'AUTHENTICATION_FAILED');
    expectError(await send({ phoneNumber: '+5511912345678', message: 'hi' }, login.refreshToken), 401, 'AUTHENTICATION_FAILED');
  });
});
