import { keys } from '../../src/redis/keys.js';
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { QUEUE } from '../../src/queues/jobs.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually, post, request, type JsonResponse } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { queuesIdle } from './client.js';
import { expectError } from './expect-error.js';

const SECRET = 'webhook-secret-for-the-security-suite';

describe('security: the webhook vouches for phones, so it is signed and replays do nothing', function () {
  let stack: InProcessStack;

  before(async function () {
    stack = await startStack({ inProcess: true, name: 'sec-webhook', env: { WEBHOOK_SECRET: SECRET } });
  });
  after(async function () {
    await stack?.stop();
  });

  const deliver = (raw: string, signature?: string): Promise<JsonResponse> =>
    request(stack.url, 'POST', '/messaging-endpoint', {
      raw,
      headers: { 'content-type': 'application/json', ...(signature ? { 'x-hub-signature-256': signature } : {}) },
    });
  const register = async (emojiString: string): Promise<string> => {
    const pin = randomPin();
    const r = await post(stack.url, '/register-pin', { pin, emojiString });
    expect(r.status, r.text).to.equal(200);
    return pin;
  };
  const check = (pin: string) => post<LoginBody>(stack.url, '/check-login', { pin });

  it('unsigned, wrongly signed, or signed-for-another-body deliveries → 401, and sign nobody in', async function () {
    const emoji = randomEmoji();
    const pin = await register(emoji);
    const raw = JSON.stringify(evolutionMessage({ text: `PIN: ${emoji}`, phone: randomPhone() }));
    const other = JSON.stringify(evolutionMessage({ text: 'hello' }));
    expectError(await deliver(raw), 'AUTHENTICATION_FAILED');
    expectError(await deliver(raw, WebhookAuth.sign(raw, 'not-the-secret')), 'AUTHENTICATION_FAILED');
    expectError(await deliver(raw, WebhookAuth.sign(other, SECRET)), 'AUTHENTICATION_FAILED');
    expectError(await deliver(raw, WebhookAuth.sign(raw, SECRET).slice(0, -2)), 'AUTHENTICATION_FAILED');
    expectError(await deliver(`${raw} `, WebhookAuth.sign(raw, SECRET)), 'AUTHENTICATION_FAILED');
    await queuesIdle(stack.prefix);
    expect((await check(pin)).body).to.include({ success: true, verified: false });
  });

  it('a replayed message id signs in nobody else, while the job is kept and after it is gone', async function () {
    const emoji = randomEmoji();
    const phone = randomPhone();
    const first = await register(emoji);
    const raw = JSON.stringify(evolutionMessage({ text: `PIN: ${emoji}`, phone, id: `REPLAY${randomPin()}` }));
    const signature = WebhookAuth.sign(raw, SECRET);
    expect((await deliver(raw, signature)).status).to.equal(200);
    const login = await eventually(async () => {
      const c = await check(first);
      return c.body.verified ? c.body : undefined;
    });
    expect(login.token).to.be.a('string');

    // the emoji string is free again: a new registration would match the same text
    const second = await register(emoji);
    expect((await deliver(raw, signature)).status).to.equal(200);
    await queuesIdle(stack.prefix);
    expect((await check(second)).body).to.include({ success: true, verified: false });

    // the queue forgets finished jobs; the 24-hour message-id memory must still hold
    const redis = testRedis();
    const inbound = new Queue(QUEUE.inbound, { connection: redis, prefix: keys(stack.prefix).queuePrefix(QUEUE.inbound) });
    try {
      expect(await inbound.clean(0, 1000, 'completed')).to.not.be.empty;
    } finally {
      await inbound.close();
      redis.disconnect();
    }
    expect((await deliver(raw, signature)).status).to.equal(200);
    await queuesIdle(stack.prefix, { inbound: 1 });
    expect((await check(second)).body).to.include({ success: true, verified: false });

    // control: the same text under a new message id does sign the second registration in
    const fresh = JSON.stringify(evolutionMessage({ text: `PIN: ${emoji}`, phone }));
    expect((await deliver(fresh, WebhookAuth.sign(fresh, SECRET))).status).to.equal(200);
    await eventually(async () => ((await check(second)).body.verified ? true : undefined));
  });
});
