import { expect } from 'chai';
import { evolutionMessage, startFakeEvolution, type FakeEvolution } from '../helpers/gateway.js';
import type { Redis } from 'ioredis';
import { keys } from '../../src/redis/keys.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';

const EVO_KEY = 'gateway-failures-evolution-key';
const INSTANCE = 'main';
const digits = (phone: string): string => phone.replace(/^\+/, '');

/**
 * Evolution API as it fails in the field, against a fake that answers as the real one does
 * (test/helpers/gateway.ts): its transient `400 ["Error: Connection Closed"]` while Baileys'
 * socket is down, by-events URLs built on a base URL ending in `/`, and status webhooks dated by
 * its server's local clock stamped `Z`. Each judged by outcome: the question arrives, the
 * message is taken, the receipt's time is ours.
 */
describe('messaging: Evolution API as it fails (transient 400s, doubled slashes, its clock)', function () {
  this.timeout(60_000);
  let evo: FakeEvolution;
  let stack: InProcessStack;
  let redis: Redis;

  before(async function () {
    redis = testRedis();
    evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: [INSTANCE] });
    stack = await startStack({
      inProcess: true,
      name: 'gateway-failures',
      env: {
        LOGIN_CONFIRMATION: 'on',
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: evo.url,
        EVOLUTION_API_KEY: EVO_KEY,
        EVOLUTION_INSTANCE: INSTANCE,
      },
    });
  });
  after(async function () {
    redis?.disconnect();
    await stack?.stop();
    await evo?.close();
  });

  const chat = (text: string, phone: string, path = '/messaging-endpoint') =>
    request(stack.url, 'POST', path, { json: evolutionMessage({ text, phone, instance: INSTANCE }) });
  const sentTo = (phone: string) => evo.accepted.filter((r) => (r.json as { number?: string }).number === digits(phone));

  it('the confirmation question arrives after Evolution answered 400 "Connection Closed" twice, and YES signs in', async function () {
    const phone = randomPhone();
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    evo.dropConnection(2, undefined, digits(phone));
    expect((await chat(`PIN: ${emoji}`, phone)).status).to.equal(200);
    const [question] = await eventually(async () => (sentTo(phone).length > 0 ? sentTo(phone) : undefined), 20_000, 100);
    expect((question!.json as { text: string }).text).to.match(/Reply YES/);
    // the two refused sends were made, then the third was taken
    const tries = evo.requests.filter((r) => (r.json as { number?: string } | null)?.number === digits(phone));
    expect(tries.length).to.equal(3);
    expect((await chat('YES', phone)).status).to.equal(200);
    const login = await eventually(async () => {
      const r = await post<LoginBody>(stack.url, '/check-login', { pin });
      return r.body.verified ? r.body : undefined;
    }, 15_000);
    expect(login.token).to.be.a('string');
  });

  it('a 400 with any other error is not retried: the message fails once, for good', async function () {
    const phone = randomPhone();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin: randomPin(), emojiString: emoji })).status).to.equal(200);
    evo.dropConnection(1, 'Error: something the instance can never do', digits(phone));
    expect((await chat(`PIN: ${emoji}`, phone)).status).to.equal(200);
    await stack.workers[0]!.waitForOutput(/outbound message rejected.*something the instance can never do/, 15_000);
    const tries = () => evo.requests.filter((r) => (r.json as { number?: string } | null)?.number === digits(phone));
    expect(tries().length).to.equal(1);
    expect(sentTo(phone)).to.have.length(0);
  });

  it('a by-events path with a doubled slash (base URL ending in /) is taken and its message answered', async function () {
    const phone = randomPhone();
    const emoji = randomEmoji();
    const pin = randomPin();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const r = await chat(`PIN: ${emoji}`, phone, '/messaging-endpoint//messages-upsert');
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ accepted: 1 });
    // the question went out: the message reached the worker under its event
    await eventually(async () => (sentTo(phone).length > 0 ? true : undefined), 15_000, 100);
    // other spellings: a trailing slash, and doubled slashes elsewhere, are the same path
    for (const path of ['/messaging-endpoint/', '/messaging-endpoint//', '/messaging-endpoint/messages-upsert/']) {
      const spelled = await request(stack.url, 'POST', path, { json: evolutionMessage({ text: 'hello', fromMe: true, instance: INSTANCE }) });
      expect(spelled.status, `${path}: ${spelled.text}`).to.equal(200);
    }
  });

  it("a delivery receipt is dated when we hear it, not by Evolution's local clock stamped Z", async function () {
    // the message tracked: the confirmation question the service sends
    const phone = randomPhone();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin: randomPin(), emojiString: emoji })).status).to.equal(200);
    await chat(`PIN: ${emoji}`, phone);
    const [question] = await eventually(async () => (sentTo(phone).length > 0 ? sentTo(phone) : undefined), 15_000, 100);
    const k = keys(stack.prefix);
    // the worker has recorded the gateway's id of it
    const jobId = await eventually(async () => (await redis.get(k.outboundByGateway(`evolution:${INSTANCE}`, question!.id))) ?? undefined, 15_000, 100);

    // Evolution in America/Sao_Paulo: its date_time is local time (3 h behind UTC) stamped Z
    const before = Date.now();
    const receipt = {
      event: 'messages.update',
      instance: INSTANCE,
      data: { keyId: question!.id, remoteJid: `${digits(phone)}@s.whatsapp.net`, fromMe: true, status: 'DELIVERY_ACK', instanceId: 'f4e6c1d2' },
      date_time: new Date(Date.now() - 3 * 3600_000).toISOString(),
      sender: '5511000000000@s.whatsapp.net',
    };
    expect((await request(stack.url, 'POST', '/messaging-endpoint', { json: receipt })).status).to.equal(200);
    const after = Date.now();
    const record = await eventually(
      async () => {
        const h = await redis.hgetall(k.outbound(jobId));
        return h.deliveredAt ? h : undefined;
      },
      15_000,
      100,
    );
    expect(Number(record.deliveredAt)).to.be.within(before, after);
    expect(Number(record.deliveredAt)).to.be.at.least(Number(record.sentAt));
  });
});
