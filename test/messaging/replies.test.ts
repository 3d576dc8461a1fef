import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import {
  buttonsOf,
  cloudButtonReply,
  cloudMessage,
  cloudPricedStatus,
  evolutionMessage,
  outboundOf,
  startFakeEvolution,
  startFakeGraph,
  type FakeGateway,
} from '../helpers/gateway.js';
import { eventually, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { sample } from '../ops/support.js';

const EVO_KEY = 'replies-evolution-api-key';
const GRAPH_TOKEN = 'replies-graph-token';
const PNID = '106540352242922';
const METRICS_TOKEN = 'replies-metrics-token-0123456789';
const digits = (phone: string): string => phone.replace(/^\+/, '');
const brazilPhone = (): string => `+55119${Math.floor(1e7 + Math.random() * 9e7)}`;
const portugalPhone = (): string => `+35191${Math.floor(1e6 + Math.random() * 9e6)}`;

describe('messaging: replies as a policy (CHAT_REPLY_KINDS), their cost, the daily cap', function () {
  describe('configuration', function () {
    const base = { REDIS_URL: 'redis://127.0.0.1:6379' };
    it("defaults to what a person needs: the question and its follow-ups, signed in with its undo hint, why a code did nothing, the STOP receipt, the answers to the person's own commands", function () {
      const kinds = [...loadConfig(base).replies.kinds].sort();
      expect(kinds).to.deep.equal([
        'blocked',
        'cannot-sign-in',
        'confirm',
        'country-not-served',
        'erase-confirm',
        'erased',
        'help',
        'no-account',
        'nothing-to-confirm',
        'nothing-to-erase',
        'sessions',
        'signed-in',
        'signed-out',
        'slow-down',
        'unknown-code',
        'which-one',
      ]);
      expect(loadConfig({ ...base, CHAT_REPLY_KINDS: 'all' }).replies.kinds.has('signed-in')).to.equal(true);
      expect(loadConfig({ ...base, CHAT_REPLY_KINDS: 'none' }).replies.kinds.size).to.equal(0);
      expect([...loadConfig({ ...base, CHAT_REPLY_KINDS: ' Signed-In , denied' }).replies.kinds]).to.deep.equal(['signed-in', 'denied']);
    });
    it('refuses an unknown kind, and confirmation in the chat without its question', function () {
      expect(() => loadConfig({ ...base, CHAT_REPLY_KINDS: 'signed-in,hello' })).to.throw(ConfigError, /unknown reply kind "hello"/);
      expect(() => loadConfig({ ...base, LOGIN_CONFIRMATION: 'on', CHAT_REPLY_KINDS: 'signed-in' })).to.throw(
        ConfigError,
        /needs "confirm" in CHAT_REPLY_KINDS/,
      );
      expect(() => loadConfig({ ...base, REPLY_DAILY_CAP_PER_COUNTRY: '-1' })).to.throw(ConfigError);
      expect(() => loadConfig({ ...base, REPLY_YES_BUTTON: 'Yes, please sign me in now' })).to.throw(ConfigError, /at most 20/);
    });
  });

  describe('through real processes, both gateways faked', function () {
    this.timeout(60000);
    let evo: FakeGateway;
    let graph: FakeGateway;
    let stack: InProcessStack;

    before(async function () {
      this.timeout(120000);
      evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: ['test-instance'] });
      graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: [PNID] });
      stack = await startStack({
        inProcess: true,
        name: 'replies',
        env: {
          MESSAGING_PROVIDER: 'evolution,cloud',
          EVOLUTION_API_URL: evo.url,
          EVOLUTION_API_KEY: EVO_KEY,
          EVOLUTION_INSTANCE: 'test-instance',
          WHATSAPP_TOKEN: GRAPH_TOKEN,
          WHATSAPP_PHONE_NUMBER_ID: PNID,
          GRAPH_API_URL: `${graph.url}/v21.0`,
          LOGIN_CONFIRMATION: 'on',
          APP_NAME: 'Acme',
          // the default less `signed-in`, as docs/configuration.md suggests with confirmation on
          CHAT_REPLY_KINDS: 'confirm,which-one,unknown-code,nothing-to-confirm,signed-out,cannot-sign-in',
          REPLY_DAILY_CAP_PER_COUNTRY: '2',
          METRICS_TOKEN,
          METRICS_INTERVAL_MS: '200',
        },
      });
    });
    after(async function () {
      this.timeout(30000);
      await stack?.stop();
      await evo?.close();
      await graph?.close();
    });

    const metrics = async (): Promise<string> => {
      const r = await request(stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(r.status, r.text).to.equal(200);
      return r.text;
    };
    const metricAtLeast = (name: string, labels: Record<string, string>, n: number): Promise<number> =>
      eventually(
        async () => {
          const v = sample(await metrics(), name, labels);
          return v >= n ? v : undefined;
        },
        15000,
        200,
      );
    const webhook = async (body: Record<string, unknown>): Promise<void> => {
      const r = await post(stack.url, '/messaging-endpoint', body);
      expect(r.status, r.text).to.equal(200);
    };
    const register = async (): Promise<{ pin: string; emoji: string }> => {
      const reg = { pin: randomPin(), emoji: randomEmoji() };
      expect((await post(stack.url, '/register-pin', { pin: reg.pin, emojiString: reg.emoji })).status).to.equal(200);
      return reg;
    };
    const check = (pin: string) => post<LoginBody & { awaitingConfirmation?: boolean }>(stack.url, '/check-login', { pin });
    const sentTo = (gw: FakeGateway, phone: string) => gw.accepted.filter((r) => outboundOf(r).to === digits(phone));
    const waitSent = (gw: FakeGateway, phone: string, n: number) =>
      eventually(async () => (sentTo(gw, phone).length >= n ? sentTo(gw, phone) : undefined), 15000, 50);
    const numberOf = (question: string): string => /Reply YES (\d{2}) to sign in/.exec(question)![1]!;

    it("a button press confirms exactly its question: with two open, the second's YES signs in the second only", async function () {
      const phone = randomPhone();
      const first = await register();
      const second = await register();
      await webhook(cloudMessage({ text: `PIN: ${first.emoji}`, phone }));
      const [q1] = await waitSent(graph, phone, 1);
      await webhook(cloudMessage({ text: `PIN: ${second.emoji}`, phone }));
      const [, q2] = await waitSent(graph, phone, 2);
      // each question an interactive message, its buttons bound to its number, titled in the chat's language
      const [n1, n2] = [numberOf(outboundOf(q1!).text!), numberOf(outboundOf(q2!).text!)];
      expect(n1).to.not.equal(n2);
      expect((q2!.json as { type: string }).type).to.equal('interactive');
      expect(buttonsOf(q2!)).to.deep.equal([
        { id: `yes:${n2}`, title: 'Yes, sign in' },
        { id: `no:${n2}`, title: 'No, not me' },
      ]);
      expect(buttonsOf(q1!).map((b) => b.id)).to.deep.equal([`yes:${n1}`, `no:${n1}`]);

      await webhook(cloudButtonReply({ phone, id: `yes:${n2}`, title: 'Yes, sign in', context: q2!.id }));
      const login = await eventually(
        async () => {
          const r = await check(second.pin);
          return r.body.verified ? r.body : undefined;
        },
        15000,
        100,
      );
      expect(login.user.phone).to.equal(phone);
      expect((await check(first.pin)).body).to.include({ verified: false, awaitingConfirmation: true });

      // "signed-in" is switched off here: withheld (counted), never sent; the login went on
      await metricAtLeast('pinauth_replies_withheld_total', { kind: 'signed-in', reason: 'policy', country: 'GB' }, 1);
      expect(sentTo(graph, phone).map((r) => outboundOf(r).text)).to.have.length(2);

      // a typed answer still works beside the buttons
      await webhook(cloudMessage({ text: `no ${n1}`, phone }));
      await eventually(async () => ((await check(first.pin)).status === 403 ? true : undefined), 15000, 100);
    });

    it('Evolution keeps sending the question as text, and counts replies per kind, number and country', async function () {
      const phone = portugalPhone();
      const reg = await register();
      await webhook(evolutionMessage({ text: `PIN: ${reg.emoji}`, phone }));
      const [q] = await waitSent(evo, phone, 1);
      expect(q!.json).to.have.keys('number', 'text');
      expect(outboundOf(q!).text).to.match(/Reply YES \d\d to sign in/);
      await metricAtLeast('pinauth_replies_sent_total', { kind: 'confirm', gateway: 'evolution', number: 'test-instance', country: 'PT' }, 1);
    });

    it('counts each priced reply once from the Cloud API status webhooks, by the kind and country it was sent with', async function () {
      const phone = randomPhone();
      const reg = await register();
      await webhook(cloudMessage({ text: `PIN: ${reg.emoji}`, phone }));
      const [q] = await waitSent(graph, phone, 1);
      const labels = { kind: 'confirm', gateway: 'cloud', number: PNID, country: 'GB', category: 'utility', pricing_model: 'pmp', billable: 'true' };
      const before = sample(await metrics(), 'pinauth_replies_priced_total', labels);
      // the delivery record must hold the gateway id before its statuses count by kind
      await metricAtLeast('pinauth_replies_sent_total', { kind: 'confirm', gateway: 'cloud', country: 'GB' }, 1);
      for (const status of ['sent', 'delivered', 'read'] as const) await webhook(cloudPricedStatus({ id: q!.id, phone, status }));
      const after = await metricAtLeast('pinauth_replies_priced_total', labels, (Number.isNaN(before) ? 0 : before) + 1);
      expect(after - (Number.isNaN(before) ? 0 : before)).to.equal(1);
      // what the fake gateway took and what /metrics says was sent agree, per gateway
      for (const [gw, name] of [
        [graph, 'cloud'],
        [evo, 'evolution'],
      ] as const) {
        const took = gw.accepted.length;
        await eventually(async () => (sample(await metrics(), 'pinauth_replies_sent_total', { gateway: name }) === took ? true : undefined), 15000, 200);
      }
    });

    it('past the daily cap of a country, replies to it stop for the day (the question still goes), logins go on', async function () {
      const phone = brazilPhone();
      for (let i = 1; i <= 3; i++) {
        await webhook(cloudMessage({ text: `PIN: ${randomEmoji()}`, phone }));
        if (i < 3) await waitSent(graph, phone, i);
      }
      await metricAtLeast('pinauth_replies_withheld_total', { kind: 'unknown-code', reason: 'daily-cap', country: 'BR' }, 1);
      expect(sentTo(graph, phone).map((r) => outboundOf(r).text)).to.have.length(2);
      await eventually(async () => (stack.workers.some((w) => /daily reply cap reached/.test(w.output())) ? true : undefined), 5000, 50);
      // a login from the same country: its question goes out, the button signs in
      const reg = await register();
      await webhook(cloudMessage({ text: `PIN: ${reg.emoji}`, phone }));
      const q = (await waitSent(graph, phone, 3))[2]!;
      const n = numberOf(outboundOf(q).text!);
      await webhook(cloudButtonReply({ phone, id: `yes:${n}`, title: 'Yes, sign in' }));
      await eventually(async () => ((await check(reg.pin)).body.verified ? true : undefined), 15000, 100);
    });
  });
});
