import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { messageKey } from '../../src/messaging/inbound.js';
import { keys } from '../../src/redis/keys.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { startFakeEvolution, startFakeGraph, type FakeGateway } from '../helpers/gateway.js';
import { eventually, get, post, request, type JsonResponse } from '../helpers/http.js';
import { ROOT, startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { evolutionJwt, sign } from './support.js';

const EVO_KEY = 'fixtures-evolution-api-key';
const GRAPH_TOKEN = 'fixtures-graph-token';
const JWT_KEY = 'fixtures-evolution-jwt-key-0123456789';
const APP_SECRET = 'fixtures-meta-app-secret-0123456789';
const INSTANCES = ['inst-a', 'inst-b'];
const NUMBERS = ['1111111111', '2222222222'];

interface Fixture {
  expect: {
    status: number;
    accepted: number;
    ignored: number;
    reason?: string;
    then?: 'login' | 'lid-login' | 'bsuid-login' | 'edit-login' | 'number-changed' | 'status';
    statuses?: string[];
  };
  path?: string;
  body: unknown;
}

const DIR = path.join(ROOT, 'test/fixtures/gateways');
const load = (gateway: string): [string, Fixture][] =>
  readdirSync(path.join(DIR, gateway))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(path.join(DIR, gateway, f), 'utf8')) as Fixture]);

const fill = (body: unknown, values: Record<string, string>): string =>
  JSON.stringify(body).replace(/\{\{([A-Z]+)\}\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`fixture placeholder {{${name}}} has no value`);
    // the value goes inside a JSON string
    return JSON.stringify(v).slice(1, -1);
  });

const digits = (phone: string): string => phone.replace(/^\+/, '');

/**
 * Every fixture of both gateways (test/fixtures/gateways, README there) posted to a service
 * configured with both gateways, two Evolution instances and two Cloud numbers, talking to fake
 * gateway servers that check requests as the real ones do. Each is answered as designed, and
 * what follows (login and reply on the message's channel, also for a sender known only by a
 * LID or a Cloud user id; edit → login; a number change moves the account; status recorded on
 * our message) is checked.
 */
describe('messaging: real payload shapes of both gateways (fixtures)', function () {
  let evo: FakeGateway;
  let graph: FakeGateway;
  let stack: InProcessStack;
  let token: string;
  const redis = testRedis();

  before(async function () {
    this.timeout(120000);
    evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: INSTANCES });
    graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: NUMBERS });
    stack = await startStack({
      inProcess: true,
      name: 'fixtures',
      env: {
        MESSAGING_PROVIDER: 'evolution,cloud',
        EVOLUTION_API_URL: evo.url,
        EVOLUTION_API_KEY: EVO_KEY,
        EVOLUTION_INSTANCES: INSTANCES.join(','),
        WHATSAPP_TOKEN: GRAPH_TOKEN,
        WHATSAPP_PHONE_NUMBER_IDS: NUMBERS.join(','),
        GRAPH_API_URL: `${graph.url}/v21.0`,
        WEBHOOK_JWT_KEY: JWT_KEY,
        WEBHOOK_SECRET: APP_SECRET,
      },
    });
    // a user to send messages as (for the status fixtures)
    const pin = randomPin();
    const emoji = randomEmoji();
    await post(stack.url, '/register-pin', { pin, emojiString: emoji });
    const r = await postFixture('evolution', {
      event: 'messages.upsert',
      instance: 'inst-a',
      data: { key: { remoteJid: `${digits(randomPhone())}@s.whatsapp.net`, fromMe: false, id: 'SENDER' }, message: { conversation: `PIN: ${emoji}` } },
    });
    expect(r.status, r.text).to.equal(200);
    token = (await verified(pin)).token;
  });
  after(async function () {
    this.timeout(30000);
    redis.disconnect();
    await stack?.stop();
    await evo?.close();
    await graph?.close();
  });

  /** Posts as each gateway authenticates: Evolution with its JWT, Meta with its signature. */
  function postFixture(gateway: string, body: unknown, suffix = ''): Promise<JsonResponse> {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (gateway === 'evolution') headers.authorization = `Bearer ${evolutionJwt(JWT_KEY)}`;
    else headers['x-hub-signature-256'] = sign(raw, APP_SECRET);
    return request(stack.url, 'POST', `/messaging-endpoint${suffix}`, { raw, headers });
  }

  /** A Cloud API login from this number (and user id): the account's id. */
  async function loginAs(waId: string, bsuid?: string): Promise<string> {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '2222222222' },
                contacts: [{ profile: { name: 'Kerry' }, wa_id: waId, ...(bsuid ? { user_id: bsuid } : {}) }],
                messages: [
                  {
                    from: waId,
                    ...(bsuid ? { from_user_id: bsuid } : {}),
                    id: `wamid.${randomBytes(8).toString('hex')}`,
                    timestamp: '1772460309',
                    type: 'text',
                    text: { body: `PIN: ${emoji}` },
                  },
                ],
              },
            },
          ],
        },
      ],
    };
    expect((await postFixture('cloud', body)).status).to.equal(200);
    return (await verified(pin)).user.id;
  }

  const verified = (pin: string): Promise<LoginBody> =>
    eventually(async () => {
      const c = await post<LoginBody>(stack.url, '/check-login', { pin });
      return c.body.verified ? c.body : undefined;
    }, 15000);

  /** The fake's accepted request carrying this text to this recipient. */
  const delivered = (gw: FakeGateway, match: (json: Record<string, unknown>) => boolean) =>
    eventually(async () => gw.accepted.find((r) => match(r.json as Record<string, unknown>)), 15000);

  /** A message of ours, sent and accepted by the gateway of `gateway`, and its ids. */
  async function sentMessage(gateway: string): Promise<{ messageId: string; gatewayId: string }> {
    const text = `tracked ${randomBytes(4).toString('hex')}`;
    const channel = gateway === 'evolution' ? 'evolution:inst-b' : 'cloud:2222222222';
    const r = await post(stack.url, '/send-message', { phoneNumber: randomPhone(), message: text, channel }, token);
    expect(r.status, r.text).to.equal(200);
    const gw = gateway === 'evolution' ? evo : graph;
    const req = await delivered(gw, (j) => JSON.stringify(j).includes(text));
    return { messageId: String(r.body.messageId), gatewayId: req.id };
  }

  for (const gateway of ['evolution', 'cloud']) {
    describe(gateway, function () {
      for (const [file, fx] of load(gateway)) {
        it(`${file}: ${fx.expect.then ?? fx.expect.reason ?? 'answered'}`, async function () {
          const phone = randomPhone();
          const values: Record<string, string> = {
            PHONE: digits(phone),
            ID: `FX${randomBytes(8).toString('hex').toUpperCase()}`,
            ORIGINAL: `OR${randomBytes(8).toString('hex').toUpperCase()}`,
            INSTANCE: 'inst-b',
            PNID: '2222222222',
            TEXT: 'hello',
            LID: String(100000000000000 + Math.floor(Math.random() * 1e14)),
            BSUID: `US.${randomBytes(8).readBigUInt64BE()}`,
            NEWPHONE: digits(randomPhone()),
            NEWBSUID: `US.${randomBytes(8).readBigUInt64BE()}`,
          };
          const pin = randomPin();
          const emoji = randomEmoji();
          const then = fx.expect.then;
          let tracked: { messageId: string; gatewayId: string } | undefined;
          if (then === 'login' || then === 'edit-login' || then === 'lid-login' || then === 'bsuid-login') {
            expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
            values.TEXT = `PIN: ${emoji}`;
          }
          if (then === 'edit-login') {
            // the message being edited: a mistyped code from the same person, on the same channel
            const typo: Record<string, string> = { ...values, ID: values.ORIGINAL!, TEXT: `PIN: ${randomEmoji()}` };
            const original =
              gateway === 'evolution'
                ? {
                    event: 'messages.upsert',
                    instance: 'inst-b',
                    data: {
                      key: { remoteJid: `${typo.PHONE}@s.whatsapp.net`, fromMe: false, id: typo.ID },
                      pushName: 'Rita',
                      message: { conversation: typo.TEXT },
                    },
                  }
                : JSON.parse(fill(load('cloud').find(([f]) => f === 'text.json')![1].body, typo));
            expect((await postFixture(gateway, original)).status).to.equal(200);
            const scope = gateway === 'evolution' ? 'inst-b' : '';
            await eventually(
              async () => ((await redis.exists(keys(stack.prefix).sender(messageKey(gateway, scope, typo.ID!)))) === 1 ? true : undefined),
              15000,
            );
          }
          if (then === 'status') {
            tracked = await sentMessage(gateway);
            values.OUTID = tracked.gatewayId;
          }

          const r = await postFixture(gateway, fill(fx.body, values), fx.path);
          expect(r.status, r.text).to.equal(fx.expect.status);
          expect(r.body, r.text).to.deep.equal({ received: true, accepted: fx.expect.accepted, ignored: fx.expect.ignored });

          if (then === 'login' || then === 'edit-login') {
            const login = await verified(pin);
            expect(login.user.phone).to.equal(phone);
            // the reply goes out on the channel the message came on
            if (gateway === 'evolution') {
              const req = await delivered(evo, (j) => j.number === digits(phone));
              expect(req.url).to.equal('/message/sendText/inst-b');
            } else {
              const req = await delivered(graph, (j) => j.to === digits(phone));
              expect(req.url).to.equal('/v21.0/2222222222/messages');
            }
          }
          if (then === 'lid-login') {
            // no phone anywhere: signed in by the LID, answered at the LID's chat on its instance
            const login = await verified(pin);
            expect(login.user).to.not.have.property('phone');
            const req = await delivered(evo, (j) => j.number === `${values.LID}@lid`);
            expect(req.url).to.equal('/message/sendText/inst-b');
          }
          if (then === 'bsuid-login') {
            // the phone withheld: signed in by the business-scoped user id, answered to it
            const login = await verified(pin);
            expect(login.user).to.not.have.property('phone');
            const req = await delivered(graph, (j) => j.recipient === values.BSUID);
            expect(req.url).to.equal('/v21.0/2222222222/messages');
            expect(req.json).to.not.have.property('to');
          }
          if (then === 'number-changed') {
            // the account of the old number (made here by a login) now answers to the new one
            const before = await loginAs(values.PHONE!, values.BSUID);
            const again = await postFixture(gateway, fill(fx.body, { ...values, ID: `FX${randomBytes(8).toString('hex')}` }), fx.path);
            expect(again.status).to.equal(200);
            const after = await eventually(async () => {
              const id = await redis.get(keys(stack.prefix).userByPhone(`+${values.NEWPHONE}`));
              return id ?? undefined;
            }, 15000);
            expect(after).to.equal(before);
            expect(await redis.get(keys(stack.prefix).userByPhone(phone))).to.equal(null);
          }
          if (then === 'status') {
            const want = fx.expect.statuses![0]!;
            const m = await eventually(async () => {
              const g = await get(stack.url, `/messages/${tracked!.messageId}`, token);
              return g.body.status === want ? g : undefined;
            });
            expect(m.body).to.include({ gatewayMessageId: tracked!.gatewayId, channel: gateway === 'evolution' ? 'evolution:inst-b' : 'cloud:2222222222' });
            expect((m.body.at as Record<string, number>)[want]).to.be.a('number');
            if (want === 'failed') expect(m.body.error).to.include('24-hour');
          }
          if (fx.expect.reason !== undefined && fx.expect.accepted === 0) {
            expect(fx.expect.ignored).to.equal(1);
          }
        });
      }
    });
  }
});
