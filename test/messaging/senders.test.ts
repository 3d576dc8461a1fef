import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { CATALOGUE } from '../../src/chat-catalogue.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { InboundMessage } from '../../src/chat/message.js';
import { refuseSender, senderCountry } from '../../src/queues/sender-rules.js';
import type { Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { cloudMessage, cloudWebhook, outboundOf, startFakeGraph, type FakeGateway } from '../helpers/gateway.js';
import { eventually, post, request } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { startServices, stopServices } from '../helpers/services.js';
import { sample } from '../ops/support.js';

const GRAPH_TOKEN = 'senders-graph-token';
const PNID = '106540352242922';
const METRICS_TOKEN = 'senders-metrics-token-0123456789';
const BUDGET = 3;
const PT = CATALOGUE.pt;
const digits = (phone: string): string => phone.replace(/^\+/, '');
const portugalPhone = (): string => `+35191${Math.floor(1e6 + Math.random() * 9e6)}`;
const bsuid = (country: string): string => `${country}.${BigInt(`0x${randomBytes(8).toString('hex')}`).toString()}`;

/** A Cloud API message from a sender who withheld the phone (a username): only the BSUID names them. */
function cloudUsernameMessage(userId: string, text: string): Record<string, unknown> {
  return cloudWebhook({
    contacts: [{ profile: { name: 'Kerry', username: '@kerry.f' }, user_id: userId }],
    messages: [
      {
        from_user_id: userId,
        id: `wamid.${randomBytes(16).toString('base64url')}`,
        timestamp: String(Math.floor(Date.now() / 1000)),
        type: 'text',
        text: { body: text },
      },
    ],
  });
}

describe('messaging: per-sender budgets and sender countries', function () {
  describe('configuration and the sender country', function () {
    const base = { REDIS_URL: 'redis://127.0.0.1:6379' };
    it('a budget of 20 a minute by default, 0 turns it off; one country list at most, of real codes', function () {
      expect(loadConfig(base).rateLimits.senderMessagesPerMinute).to.equal(20);
      expect(loadConfig({ ...base, SENDER_MESSAGES_PER_MINUTE: '0' }).rateLimits.senderMessagesPerMinute).to.equal(0);
      expect(loadConfig(base).senderCountries).to.equal(undefined);
      const deny = loadConfig({ ...base, SENDER_COUNTRIES_DENY: 'ru, kp' }).senderCountries!;
      expect(deny.mode).to.equal('deny');
      expect([...deny.countries]).to.deep.equal(['RU', 'KP']);
      expect(() => loadConfig({ ...base, SENDER_COUNTRIES_ALLOW: 'BR', SENDER_COUNTRIES_DENY: 'RU' })).to.throw(ConfigError, /both set/);
      expect(() => loadConfig({ ...base, SENDER_COUNTRIES_ALLOW: 'BR,UK' })).to.throw(ConfigError, /UK/);
      expect(() => loadConfig({ ...base, SENDER_COUNTRIES_DENY: 'Brazil' })).to.throw(ConfigError, /BRAZIL/);
    });
    it("takes the country from the phone, else from the BSUID's prefix, else unknown", function () {
      expect(senderCountry({ phone: '+5511987654321' })).to.equal('BR');
      expect(senderCountry({ phone: '+447400123456', userId: 'US.1349' })).to.equal('GB');
      expect(senderCountry({ phone: null, userId: 'US.13491208655302741918' })).to.equal('US');
      expect(senderCountry({ phone: null, userId: '13491208655302741918' })).to.equal('unknown');
      expect(senderCountry({ phone: null })).to.equal('unknown');
    });
  });

  describe('the rules on their own, on the real Redis budget', function () {
    let services: Services;
    before(async function () {
      services = await startServices('senders-rules', { SENDER_MESSAGES_PER_MINUTE: '2' });
    });
    after(async function () {
      await stopServices(services);
    });
    const message = (m: Partial<InboundMessage>): InboundMessage => ({
      provider: 'evolution',
      id: randomBytes(8).toString('hex'),
      phone: null,
      text: 'PIN: x',
      displayName: null,
      ...m,
    });

    it('a deny list refuses its countries only, an unknown country is served; 0 spends no budget', async function () {
      const rules = { budget: false, countries: { mode: 'deny' as const, countries: new Set(['BR']) } };
      expect(await refuseSender(services.limits, rules, message({ phone: '+5511987654321' }))).to.deep.equal({ reason: 'country', country: 'BR' });
      expect(await refuseSender(services.limits, rules, message({ phone: portugalPhone() }))).to.equal(undefined);
      expect(await refuseSender(services.limits, rules, message({ lid: '123456789012345' }))).to.equal(undefined);
      // the budget off (SENDER_MESSAGES_PER_MINUTE=0): every message from one sender goes on
      const phone = portugalPhone();
      for (let i = 0; i < 30; i++) expect(await refuseSender(services.limits, rules, message({ phone }))).to.equal(undefined);
    });

    it('the budget is per sender (LID when the phone is withheld), told once a window, and spares number changes and non-text messages', async function () {
      const lid = String(1e14 + Math.floor(Math.random() * 1e13));
      const rules = { budget: true, countries: undefined };
      const from = (m: Partial<InboundMessage> = {}) => refuseSender(services.limits, rules, message({ lid, ...m }));
      expect(await from()).to.equal(undefined);
      expect(await from({ text: null })).to.equal(undefined);
      expect(await from({ numberChanged: true, text: null })).to.equal(undefined);
      expect(await from()).to.equal(undefined);
      expect(await from()).to.deep.equal({ reason: 'slowed', tell: true, country: 'unknown' });
      expect(await from()).to.deep.equal({ reason: 'slowed', tell: false, country: 'unknown' });
      expect(await refuseSender(services.limits, rules, message({ lid: `${lid}9` }))).to.equal(undefined);
    });
  });

  describe('through real processes, the Cloud API faked', function () {
    this.timeout(60000);
    let graph: FakeGateway;
    let stack: InProcessStack;

    before(async function () {
      this.timeout(120000);
      graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: [PNID] });
      stack = await startStack({
        inProcess: true,
        name: 'senders',
        env: {
          MESSAGING_PROVIDER: 'cloud',
          WHATSAPP_TOKEN: GRAPH_TOKEN,
          WHATSAPP_PHONE_NUMBER_ID: PNID,
          GRAPH_API_URL: `${graph.url}/v21.0`,
          APP_NAME: 'Acme',
          CHAT_LANGUAGE: 'pt',
          SENDER_MESSAGES_PER_MINUTE: String(BUDGET),
          SENDER_COUNTRIES_ALLOW: 'GB,US',
          METRICS_TOKEN,
          METRICS_INTERVAL_MS: '200',
        },
      });
    });
    after(async function () {
      this.timeout(30000);
      await stack?.stop();
      await graph?.close();
    });

    const metric = async (name: string, labels: Record<string, string>): Promise<number> => {
      const r = await request(stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(r.status, r.text).to.equal(200);
      const v = sample(r.text, name, labels);
      return Number.isNaN(v) ? 0 : v;
    };
    const metricAtLeast = (name: string, labels: Record<string, string>, n: number): Promise<number> =>
      eventually(
        async () => {
          const v = await metric(name, labels);
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
    const check = (pin: string) => post<LoginBody>(stack.url, '/check-login', { pin });
    const signedIn = (pin: string): Promise<LoginBody> =>
      eventually(
        async () => {
          const r = await check(pin);
          return r.body.verified ? r.body : undefined;
        },
        15000,
        100,
      );
    /** what went to a phone's digits, or to a BSUID (the Cloud API's `recipient`) */
    const textsTo = (to: string): string[] =>
      graph.accepted.filter((r) => outboundOf(r).to === to || (r.json as { recipient?: unknown }).recipient === to).map((r) => outboundOf(r).text ?? '');
    const waitText = (to: string, text: string): Promise<string[]> => eventually(async () => (textsTo(to).includes(text) ? textsTo(to) : undefined), 15000, 50);
    const fill = (t: string): string => t.replaceAll('{app}', 'Acme');

    it('a sender over its budget is slowed and told so once; its code does nothing; another sender still signs in', async function () {
      const phone = randomPhone();
      const slowedBefore = await metric('pinauth_sender_refused_total', { reason: 'slowed', country: 'GB' });
      // the budget spent on codes that match nothing (each answered "unknown code")
      for (let i = 0; i < BUDGET; i++) await webhook(cloudMessage({ text: `PIN: ${randomEmoji()}`, phone }));
      await eventually(async () => (textsTo(digits(phone)).length >= BUDGET ? true : undefined), 15000, 50);
      // past it: a real code and a STOP do nothing, and one slow-down reply is sent
      const reg = await register();
      await webhook(cloudMessage({ text: `PIN: ${reg.emoji}`, phone }));
      await webhook(cloudMessage({ text: 'PARAR', phone }));
      await metricAtLeast('pinauth_sender_refused_total', { reason: 'slowed', country: 'GB' }, slowedBefore + 2);
      await waitText(digits(phone), fill(PT.slowDown));

      // another sender is not held back by this one's budget
      const other = randomPhone();
      const otherReg = await register();
      await webhook(cloudMessage({ text: `PIN: ${otherReg.emoji}`, phone: other }));
      expect((await signedIn(otherReg.pin)).user.phone).to.equal(other);

      expect((await check(reg.pin)).body.verified).to.equal(false);
      const sent = textsTo(digits(phone));
      expect(sent.filter((t) => t === fill(PT.slowDown))).to.have.length(1);
      expect(sent).to.have.length(BUDGET + 1);
    });

    it("a code from a country the allow list leaves out signs nobody in, and is answered in the chat's language", async function () {
      const phone = portugalPhone();
      const reg = await register();
      await webhook(cloudMessage({ text: `PIN: ${reg.emoji}`, phone }));
      await waitText(digits(phone), fill(PT.countryNotServed));
      await metricAtLeast('pinauth_sender_refused_total', { reason: 'country', country: 'PT' }, 1);
      expect((await check(reg.pin)).body.verified).to.equal(false);
    });

    it("a sender who withheld the phone: the BSUID's country prefix decides", async function () {
      const served = await register();
      await webhook(cloudUsernameMessage(bsuid('US'), `PIN: ${served.emoji}`));
      await signedIn(served.pin);

      const refusedId = bsuid('DE');
      const refused = await register();
      await webhook(cloudUsernameMessage(refusedId, `PIN: ${refused.emoji}`));
      await waitText(refusedId, fill(PT.countryNotServed));
      await metricAtLeast('pinauth_sender_refused_total', { reason: 'country', country: 'DE' }, 1);
      expect((await check(refused.pin)).body.verified).to.equal(false);
    });

    it('an allowed country signs in', async function () {
      const phone = randomPhone();
      const reg = await register();
      await webhook(cloudMessage({ text: `PIN: ${reg.emoji}`, phone }));
      expect((await signedIn(reg.pin)).user.phone).to.equal(phone);
    });
  });
});
