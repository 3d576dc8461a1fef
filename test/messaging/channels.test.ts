import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { cloudMessage, evolutionMessage, startFakeEvolution, startFakeGraph, type FakeGateway } from '../helpers/gateway.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';

const EVO_KEY = 'channels-evolution-api-key';
const GRAPH_TOKEN = 'channels-graph-token';
const METRICS_TOKEN = 'channels-metrics-token-0123456789';
const digits = (phone: string): string => phone.replace(/^\+/, '');

/** A Cloud API message sent to business number `pnid`. */
function cloudTo(pnid: string, text: string, phone: string): Record<string, unknown> {
  const body = cloudMessage({ text, phone }) as { entry: { changes: { value: { metadata: Record<string, string> } }[] }[] };
  body.entry[0]!.changes[0]!.value.metadata.phone_number_id = pnid;
  return body;
}

/**
 * Several channels at once (two Evolution instances and two Cloud API numbers, both gateways):
 * each chat reply leaves on the channel its message came on, /send-message goes where it is
 * told (the documented default otherwise), every outbound message is tracked to its gateway id
 * and readable by its sender only, and Evolution v1's outbound shape by configuration. The
 * fake gateways answer 4xx to any request the real ones would refuse (wrong instance, number,
 * key, token or body).
 */
describe('messaging: channels (several gateways, instances and numbers at once)', function () {
  let evo: FakeGateway;
  let graph: FakeGateway;
  let stack: InProcessStack;
  let token: string;
  let otherToken: string;

  before(async function () {
    this.timeout(120000);
    evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: ['inst-a', 'inst-b'] });
    graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: ['1111111111', '2222222222'] });
    stack = await startStack({
      inProcess: true,
      name: 'channels',
      env: {
        // the worker's outbound counters reach the web node's /metrics within a second, not five
        METRICS_INTERVAL_MS: '1000',
        MESSAGING_PROVIDER: 'evolution,cloud',
        EVOLUTION_API_URL: evo.url,
        EVOLUTION_API_KEY: EVO_KEY,
        // the one-instance variable of old beside the list: both count
        EVOLUTION_INSTANCE: 'inst-a',
        EVOLUTION_INSTANCES: 'inst-b',
        WHATSAPP_TOKEN: GRAPH_TOKEN,
        WHATSAPP_PHONE_NUMBER_IDS: '1111111111,2222222222',
        GRAPH_API_URL: `${graph.url}/v21.0`,
        DEFAULT_CHANNEL: 'cloud:2222222222',
        METRICS_TOKEN,
      },
    });
    token = (await login((text, phone) => evolutionMessage({ text, phone, instance: 'inst-a' }))).token;
    otherToken = (await login((text, phone) => evolutionMessage({ text, phone, instance: 'inst-a' }))).token;
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
    await evo?.close();
    await graph?.close();
  });

  async function login(body: (text: string, phone: string) => Record<string, unknown>, phone = randomPhone()): Promise<LoginBody> {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const r = await post(stack.url, '/messaging-endpoint', body(`PIN: ${emoji}`, phone));
    expect(r.status, r.text).to.equal(200);
    return eventually(async () => {
      const c = await post<LoginBody>(stack.url, '/check-login', { pin });
      return c.body.verified ? c.body : undefined;
    }, 15000);
  }

  const accepted = (gw: FakeGateway, match: (json: Record<string, unknown>) => boolean) =>
    eventually(async () => gw.accepted.find((r) => match(r.json as Record<string, unknown>)), 15000);

  it('answers each login on the channel its message came on', async function () {
    const cases: [string, (text: string, phone: string) => Record<string, unknown>, FakeGateway, string, 'number' | 'to'][] = [
      ['evolution inst-a', (t, p) => evolutionMessage({ text: t, phone: p, instance: 'inst-a' }), evo, '/message/sendText/inst-a', 'number'],
      ['evolution inst-b', (t, p) => evolutionMessage({ text: t, phone: p, instance: 'inst-b' }), evo, '/message/sendText/inst-b', 'number'],
      ['cloud 1111111111', (t, p) => cloudTo('1111111111', t, p), graph, '/v21.0/1111111111/messages', 'to'],
      ['cloud 2222222222', (t, p) => cloudTo('2222222222', t, p), graph, '/v21.0/2222222222/messages', 'to'],
    ];
    for (const [name, body, gw, url, field] of cases) {
      const phone = randomPhone();
      await login(body, phone);
      const req = await accepted(gw, (j) => j[field] === digits(phone));
      expect(req.url, name).to.equal(url);
      expect(
        evo.accepted.concat(graph.accepted).filter((r) => JSON.stringify(r.json).includes(digits(phone))),
        name,
      ).to.have.length(1);
    }
    // and nothing the fakes refused along the way
    expect(evo.requests.length + graph.requests.length).to.equal(evo.accepted.length + graph.accepted.length);
  });

  it('/send-message goes on the channel named, else on DEFAULT_CHANNEL, and says which', async function () {
    const channels: [string | undefined, FakeGateway, string][] = [
      [undefined, graph, '/v21.0/2222222222/messages'],
      ['cloud:1111111111', graph, '/v21.0/1111111111/messages'],
      ['evolution:inst-a', evo, '/message/sendText/inst-a'],
      ['evolution:inst-b', evo, '/message/sendText/inst-b'],
    ];
    for (const [channel, gw, url] of channels) {
      const text = `routed ${randomBytes(4).toString('hex')}`;
      const r = await post(stack.url, '/send-message', { phoneNumber: randomPhone(), message: text, ...(channel ? { channel } : {}) }, token);
      expect(r.status, r.text).to.equal(200);
      expect(r.body.channel).to.equal(channel ?? 'cloud:2222222222');
      const req = await accepted(gw, (j) => JSON.stringify(j).includes(text));
      expect(req.url, String(channel)).to.equal(url);
    }
  });

  it('/send-message refuses a channel that is not configured, or not a channel', async function () {
    for (const channel of ['evolution:inst-z', 'cloud:3333333333', 'log', 'telegram:1', '', null, 7]) {
      const r = await post(stack.url, '/send-message', { phoneNumber: randomPhone(), message: 'x', channel }, token);
      expect(r.status, String(channel)).to.equal(400);
      expect(r.body.error).to.equal('VALIDATION_ERROR');
    }
  });

  it('tracks a sent message to its gateway id and statuses; GET /messages/:id answers its sender only', async function () {
    const text = `tracked ${randomBytes(4).toString('hex')}`;
    const phone = randomPhone();
    const r = await post(stack.url, '/send-message', { phoneNumber: phone, message: text, channel: 'cloud:1111111111' }, token);
    const id = String(r.body.messageId);
    const req = await accepted(graph, (j) => JSON.stringify(j).includes(text));
    const sent = await eventually(async () => {
      const g = await get(stack.url, `/messages/${id}`, token);
      return g.body.status === 'sent' ? g : undefined;
    });
    expect(sent.body).to.include({ success: true, messageId: id, channel: 'cloud:1111111111', kind: 'manual', gatewayMessageId: req.id });
    expect(Object.keys(sent.body.at as object)).to.have.members(['queued', 'sent']);

    // statuses arrive out of order: read before delivered; the record only moves forward
    const statuses = (list: [string, number][]) => ({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550001111', phone_number_id: '1111111111' },
                statuses: list.map(([status, ts]) => ({ id: req.id, status, timestamp: String(ts), recipient_id: digits(phone) })),
              },
            },
          ],
        },
      ],
    });
    const now = Math.floor(Date.now() / 1000);
    expect((await post(stack.url, '/messaging-endpoint', statuses([['read', now + 2]]))).status).to.equal(200);
    expect((await post(stack.url, '/messaging-endpoint', statuses([['delivered', now + 1]]))).status).to.equal(200);
    const read = await get(stack.url, `/messages/${id}`, token);
    expect(read.body.status).to.equal('read');
    expect((read.body.at as Record<string, number>).delivered).to.equal((now + 1) * 1000);

    expect((await get(stack.url, `/messages/${id}`, otherToken)).status).to.equal(404);
    expect((await get(stack.url, '/messages/999999999', token)).status).to.equal(404);
    expect((await get(stack.url, `/messages/${id}`)).status).to.equal(401);
    expect((await get(stack.url, '/messages/a%20b', token)).status).to.equal(400);
  });

  it('a failure for good is recorded on the message, with the reason', async function () {
    // the next request the fake Evolution gets is refused as the real one refuses an unknown number
    evo.queue.push({
      status: 400,
      body: { status: 400, error: 'Bad Request', response: { message: [{ exists: false, jid: '15550000000@s.whatsapp.net', number: '15550000000' }] } },
    });
    const r = await post(stack.url, '/send-message', { phoneNumber: '+15550000000', message: 'to nobody', channel: 'evolution:inst-a' }, token);
    const id = String(r.body.messageId);
    const failed = await eventually(async () => {
      const g = await get(stack.url, `/messages/${id}`, token);
      return g.body.status === 'failed' ? g : undefined;
    }, 15000);
    expect(failed.body.error).to.include('not on WhatsApp');
    expect(failed.body.gatewayMessageId).to.equal(null);
  });

  it('counts outbound results and status updates in /metrics', async function () {
    const m = await eventually(async () => {
      const r = await request(stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      return /pinauth_outbound_messages_total\{[^}]*gateway="cloud"[^}]*result="sent"/.test(r.text) &&
        /pinauth_delivery_status_updates_total\{[^}]*status="read"/.test(r.text)
        ? r
        : undefined;
    }, 20000);
    expect(m.text).to.match(/pinauth_outbound_messages_total\{[^}]*gateway="evolution"[^}]*result="sent"/);
  });
});

describe('messaging: Evolution v1 outbound shape (EVOLUTION_API_VERSION=v1)', function () {
  let evo: FakeGateway;
  let stack: InProcessStack;

  before(async function () {
    this.timeout(120000);
    evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: ['legacy'], version: 'v1' });
    stack = await startStack({
      inProcess: true,
      name: 'evo-v1',
      env: {
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: evo.url,
        EVOLUTION_API_KEY: EVO_KEY,
        EVOLUTION_INSTANCE: 'legacy',
        EVOLUTION_API_VERSION: 'v1',
        REPLY_SIGNED_IN: 'Signed in (v1)',
      },
    });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
    await evo?.close();
  });

  it('replies with {number, textMessage: {text}}', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const phone = randomPhone();
    await post(stack.url, '/register-pin', { pin, emojiString: emoji });
    expect((await post(stack.url, '/messaging-endpoint', evolutionMessage({ text: `PIN: ${emoji}`, phone, instance: 'legacy' }))).status).to.equal(200);
    const req = await eventually(async () => evo.accepted.find((r) => (r.json as { number?: string }).number === digits(phone)), 15000);
    expect(req.url).to.equal('/message/sendText/legacy');
    expect(Object.keys(req.json as object)).to.have.members(['number', 'textMessage']);
    expect(req.json)
      .to.have.nested.property('textMessage.text')
      .that.matches(/^Signed in \(v1\)/);
    expect(evo.requests).to.have.length(evo.accepted.length);
  });
});
