import { expect } from 'chai';
import { PinAuthClient } from '@pin-auth/client';
import { io } from 'socket.io-client';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { cloudMessage, startFakeEvolution, startFakeGraph, type FakeGateway } from '../helpers/gateway.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';

const EVO_KEY = 'numbers-evolution-api-key';
const GRAPH_TOKEN = 'numbers-graph-token';
const METRICS_TOKEN = 'numbers-metrics-token-0123456789';
const EVO_NUMBER = '15550000001';
const CLOUD_A = { id: '1111111111', number: '15550000011' };
const CLOUD_B = { id: '2222222222', number: '15550000022' };

/** Evolution v2's `connection.update` webhook: `data` is the instance name and its socket state. */
const connectionUpdate = (state: 'open' | 'close' | 'connecting', statusReason: number) => ({
  event: 'connection.update',
  instance: 'inst-a',
  data: { instance: 'inst-a', state, statusReason },
  destination: 'http://pin-auth/messaging-endpoint',
  date_time: new Date().toISOString(),
  server_url: 'http://evolution:8080',
});

/** A Cloud API `phone_number_quality_update` webhook (Meta names the number by its digits only). */
const qualityUpdate = (displayNumber: string, event: string, currentLimit = 'TIER_1K') => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      time: Math.floor(Date.now() / 1000),
      changes: [{ field: 'phone_number_quality_update', value: { display_phone_number: displayNumber, event, current_limit: currentLimit } }],
    },
  ],
});

/** A Cloud API `account_update` webhook banning or reinstating the account of a number. */
const accountUpdate = (phoneNumber: string, banState: 'DISABLE' | 'REINSTATE') => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      time: Math.floor(Date.now() / 1000),
      changes: [
        {
          field: 'account_update',
          value: { phone_number: phoneNumber, event: 'DISABLED_UPDATE', ban_info: { waba_ban_state: banState, waba_ban_date: '2026-12-01' } },
        },
      ],
    },
  ],
});

/** A Cloud API message sent to business number `pnid`. */
function cloudTo(pnid: string, text: string, phone: string): Record<string, unknown> {
  const body = cloudMessage({ text, phone }) as { entry: { changes: { value: { metadata: Record<string, string> } }[] }[] };
  body.entry[0]!.changes[0]!.value.metadata.phone_number_id = pnid;
  return body;
}

/**
 * Several numbers and their health: with an Evolution instance and two Cloud API numbers, the
 * page and register-pin (HTTP and socket) name the first healthy number; a ban or restriction
 * the gateway reports (Evolution `connection.update` close 401, Cloud quality and account
 * webhooks, a send answered 131031) moves them to the next within seconds, a recovery brings
 * the number back, and replies still leave on the number the message came in on.
 */
describe('messaging: several numbers and their health', function () {
  let evo: FakeGateway;
  let graph: FakeGateway;
  let stack: InProcessStack;

  before(async function () {
    this.timeout(120000);
    evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: ['inst-a'] });
    graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: [CLOUD_A.id, CLOUD_B.id] });
    stack = await startStack({
      inProcess: true,
      name: 'numbers',
      env: {
        MESSAGING_PROVIDER: 'evolution,cloud',
        EVOLUTION_API_URL: evo.url,
        EVOLUTION_API_KEY: EVO_KEY,
        EVOLUTION_INSTANCES: 'inst-a',
        WHATSAPP_TOKEN: GRAPH_TOKEN,
        WHATSAPP_PHONE_NUMBER_IDS: `${CLOUD_A.id},${CLOUD_B.id}`,
        GRAPH_API_URL: `${graph.url}/v21.0`,
        WHATSAPP_NUMBERS: `evolution:inst-a=+${EVO_NUMBER},cloud:${CLOUD_A.id}=+${CLOUD_A.number},cloud:${CLOUD_B.id}=+${CLOUD_B.number}`,
        METRICS_TOKEN,
        METRICS_INTERVAL_MS: '500',
      },
    });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
    await evo?.close();
    await graph?.close();
  });

  const webhook = async (body: unknown) => {
    const r = await post(stack.url, '/messaging-endpoint', body);
    expect(r.status, r.text).to.equal(200);
  };
  const registerNumber = async (): Promise<unknown> => (await post(stack.url, '/register-pin', { pin: randomPin() })).body.whatsappNumber;
  const pageNumber = async (): Promise<string | undefined> => /<strong>\+(\d+)<\/strong>/.exec((await get(stack.url, '/')).text)?.[1];
  /** register-pin and the page both name `number`, within a few seconds */
  const pointsAt = (number: string) =>
    eventually(async () => ((await registerNumber()) === number && (await pageNumber()) === number ? true : undefined), 5000);

  it('names the first configured number while all are healthy, over HTTP and the socket', async function () {
    await pointsAt(EVO_NUMBER);
    const socket = io(stack.url, { transports: ['websocket'] });
    try {
      const ack = await new Promise<Record<string, unknown>>((resolve) => socket.emit('register-pin', { pin: randomPin() }, resolve));
      expect(ack).to.include({ success: true, whatsappNumber: EVO_NUMBER });
    } finally {
      socket.close();
    }
  });

  it('an Evolution instance logged out (connection.update close 401) sends people to the next number; open brings it back', async function () {
    await webhook(connectionUpdate('close', 401));
    await pointsAt(CLOUD_A.number);
    // connecting says nothing yet: Baileys passes through it on every reconnect
    await webhook(connectionUpdate('connecting', 200));
    expect(await registerNumber()).to.equal(CLOUD_A.number);
    const metrics = await request(stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.text).to.match(/pinauth_channel_healthy\{gateway="evolution",number="inst-a"\} 0/);
    expect(metrics.text).to.match(new RegExp(`pinauth_channel_healthy\\{gateway="cloud",number="${CLOUD_A.id}"\\} 1`));
    // the typed client links to the number the service named, over the socket and over HTTP, not its option's
    for (const transport of ['auto', 'polling'] as const) {
      const client = new PinAuthClient({ baseUrl: stack.url, whatsappNumber: `+${EVO_NUMBER}`, transport });
      const login = await client.startLogin();
      expect(login.whatsappNumber, transport).to.equal(CLOUD_A.number);
      expect(login.waLink, transport).to.equal(`https://wa.me/${CLOUD_A.number}?text=${encodeURIComponent(login.text)}`);
      await login.cancel();
    }
    await webhook(connectionUpdate('open', 200));
    await pointsAt(EVO_NUMBER);
  });

  it('Cloud quality and account webhooks and a send answered 131031 take numbers out; their recovery brings them back', async function () {
    await webhook(connectionUpdate('close', 403));
    await pointsAt(CLOUD_A.number);
    await webhook(qualityUpdate(CLOUD_A.number, 'FLAGGED'));
    await pointsAt(CLOUD_B.number);
    // a reply on the restricted number B is refused as Meta refuses a locked account's sends
    graph.queue.push({ status: 400, body: { error: { message: 'Business account is restricted', type: 'OAuthException', code: 131031 } } });
    const token = await loginOn(CLOUD_B.id);
    expect(token).to.be.a('string');
    // every number down: people are still sent to one (the first), not to none
    await pointsAt(EVO_NUMBER);
    await metricsMatch(new RegExp(`pinauth_channel_healthy\\{gateway="cloud",number="${CLOUD_B.id}"\\} 0`));
    await metricsMatch(new RegExp(`pinauth_channel_messages_total\\{gateway="cloud",number="${CLOUD_B.id}",direction="in"[^}]*\\} [1-9]`));

    await webhook(qualityUpdate(CLOUD_A.number, 'UNFLAGGED'));
    await pointsAt(CLOUD_A.number);
    await webhook(accountUpdate(CLOUD_B.number, 'REINSTATE'));
    await webhook(accountUpdate(CLOUD_A.number, 'DISABLE'));
    await pointsAt(CLOUD_B.number);
    await webhook(accountUpdate(CLOUD_A.number, 'REINSTATE'));
    await webhook(connectionUpdate('open', 200));
    await pointsAt(EVO_NUMBER);
  });

  it('a reply goes out on the number the message came in on, healthy or not', async function () {
    await webhook(qualityUpdate(CLOUD_A.number, 'FLAGGED'));
    const before = graph.accepted.length;
    await loginOn(CLOUD_A.id);
    const reply = await eventually(async () => graph.accepted.slice(before).find((r) => r.url.includes('/messages')), 15000);
    expect(reply.url).to.equal(`/v21.0/${CLOUD_A.id}/messages`);
    await metricsMatch(new RegExp(`pinauth_channel_messages_total\\{gateway="cloud",number="${CLOUD_A.id}",direction="out"[^}]*\\} [1-9]`));
    await webhook(qualityUpdate(CLOUD_A.number, 'UNFLAGGED'));
  });

  const metricsMatch = async (re: RegExp) => {
    let last = '';
    try {
      await eventually(async () => {
        last = (await request(stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
        return re.test(last) ? true : undefined;
      }, 10000);
    } catch {
      throw new Error(
        `no line matches ${String(re)} in:\n${last
          .split('\n')
          .filter((l) => l.startsWith('pinauth_channel'))
          .join('\n')}`,
      );
    }
  };

  /** Signs someone in with a message to Cloud number `pnid`; their token. */
  async function loginOn(pnid: string): Promise<string> {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    await webhook(cloudTo(pnid, `PIN: ${emoji}`, randomPhone()));
    const done = await eventually(async () => {
      const c = await post<LoginBody>(stack.url, '/check-login', { pin });
      return c.body.verified ? c.body : undefined;
    }, 15000);
    return done.token;
  }
});
