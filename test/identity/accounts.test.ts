import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Cluster, type Redis } from 'ioredis';
import { keys } from '../../src/redis/keys.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { startFakeEvolution, startFakeGraph, type FakeGateway } from '../helpers/gateway.js';
import { eventually, get, post, request, type JsonResponse } from '../helpers/http.js';
import { ROOT, startStack, type Stack } from '../helpers/processes.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { testRedis } from '../helpers/redis.js';
import { evolutionJwt, sign } from '../messaging/support.js';

const EVO_KEY = 'identity-evolution-api-key';
const GRAPH_TOKEN = 'identity-graph-token';
const JWT_KEY = 'identity-evolution-jwt-key-0123456789';
const APP_SECRET = 'identity-meta-app-secret-0123456789';
const METRICS_TOKEN = 'identity-metrics-token-0123456789';
const INSTANCE = 'inst-b';
const PNID = '2222222222';

/** A gateway body of test/fixtures/gateways with its placeholders filled. */
function fixture(file: string, values: Record<string, string>): string {
  const fx = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/gateways', file), 'utf8')) as { body: unknown };
  return JSON.stringify(fx.body).replace(/\{\{([A-Z]+)\}\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`${file}: placeholder {{${name}}} has no value`);
    return JSON.stringify(v).slice(1, -1);
  });
}

const digits = (phone: string): string => phone.replace(/^\+/, '');
const newLid = (): string => String(100000000000000 + Math.floor(Math.random() * 8e14));
const newBsuid = (): string => `US.${randomBytes(8).readBigUInt64BE()}`;
const newId = (): string => `ID${randomBytes(8).toString('hex').toUpperCase()}`;
/**
 * Mexican and Argentinian mobiles as WhatsApp writes them (521… and 549…), drawn from ranges
 * libphonenumber knows as mobiles: Buenos Aires' 11 9xxx xxxx is no valid number, so its `54`
 * spelling stays as written (test/identity/phone.test.ts) and one draw in nine made two accounts.
 */
const mexicanMobile = (): string => `55${String(Math.floor(1e7 + Math.random() * 9e7))}`;
const argentineMobile = (): string => `11${String(Math.floor(2e7 + Math.random() * 7e7))}`;

interface World {
  stack: Stack;
  evo: FakeGateway;
  graph: FakeGateway;
  redis: Redis | Cluster;
}

/**
 * The same scenarios on one Redis and on a 3-primary cluster: real web and worker processes,
 * fake Evolution and Graph API servers, every payload one of the fixtures' shapes. Each is
 * judged by its outcome: the user id, where the reply went, whose account opened.
 */
function scenarios(world: () => World): void {
  const w = (): World => world();

  function postHook(gateway: 'evolution' | 'cloud', raw: string): Promise<JsonResponse> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (gateway === 'evolution') headers.authorization = `Bearer ${evolutionJwt(JWT_KEY)}`;
    else headers['x-hub-signature-256'] = sign(raw, APP_SECRET);
    return request(w().stack.url, 'POST', '/messaging-endpoint', { raw, headers });
  }

  /** Posts a fixture shape with these values (a fresh message id, the test's instance and number). */
  async function send(file: string, values: Record<string, string>): Promise<void> {
    const gateway = file.startsWith('evolution/') ? 'evolution' : 'cloud';
    const r = await postHook(
      gateway,
      fixture(file, { ID: newId(), INSTANCE, PNID, PHONE: '', LID: '', BSUID: '', NEWPHONE: '', NEWBSUID: '', TEXT: '', ...values }),
    );
    expect(r.status, r.text).to.equal(200);
    expect(r.body.accepted, r.text).to.equal(1);
  }

  /** A whole login whose chat message is `file` with these values: the verified check-login body. */
  async function loginWith(file: string, values: Record<string, string>): Promise<LoginBody> {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(w().stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    await send(file, { ...values, TEXT: `PIN: ${emoji}` });
    return eventually(async () => {
      const c = await post<LoginBody>(w().stack.url, '/check-login', { pin });
      return c.body.verified ? c.body : undefined;
    }, 20000);
  }

  /** The fake gateway's accepted request matching, once it arrives. */
  const delivered = (gw: FakeGateway, match: (json: Record<string, unknown>) => boolean) =>
    eventually(async () => gw.accepted.find((r) => match(r.json as Record<string, unknown>)), 20000);

  const profile = async (token: string): Promise<Record<string, unknown>> => {
    const r = await get<{ user: Record<string, unknown> }>(w().stack.url, '/profile', token);
    expect(r.status, r.text).to.equal(200);
    return r.body.user;
  };

  it('Evolution: a LID with and without remoteJidAlt, senderPn, senderLid, a username, the phone alone: one account; replies where each came from', async function () {
    const lid = newLid();
    const phone = randomPhone();
    const P = digits(phone);
    const first = await loginWith('evolution/v2.3-messages-upsert-lid-remoteJidAlt.json', { LID: lid, PHONE: P });
    expect(first.user.phone).to.equal(phone);
    // the LID alone (no phone beside it, a username): the same person, answered at the LID's chat
    const lidOnly = await loginWith('evolution/v2.3-baileys7-messages-upsert-lid-username.json', { LID: lid });
    expect(lidOnly.user.id).to.equal(first.user.id);
    expect(lidOnly.user.phone).to.equal(phone);
    const reply = await delivered(w().evo, (j) => j.number === `${lid}@lid`);
    expect(reply.url).to.equal(`/message/sendText/${INSTANCE}`);
    for (const shape of [
      'evolution/v2.2-messages-upsert-lid-senderPn.json',
      'evolution/v2.2-messages-upsert-pn-senderLid.json',
      'evolution/v2.3-baileys7-messages-upsert-pn-remoteJidAlt-lid.json',
      'evolution/v2.3-messages-upsert-conversation.json',
    ]) {
      const again = await loginWith(shape, { LID: lid, PHONE: P });
      expect(again.user.id, shape).to.equal(first.user.id);
    }
    // a phone chat is answered at the phone
    expect((await delivered(w().evo, (j) => j.number === P)).url).to.equal(`/message/sendText/${INSTANCE}`);
  });

  it('Evolution: someone known by a LID alone signs in with no phone; their phone, once given, joins the same account', async function () {
    const lid = newLid();
    const phone = randomPhone();
    const first = await loginWith('evolution/messages-upsert-lid-without-phone.json', { LID: lid });
    expect(first.user).to.not.have.property('phone');
    expect(await profile(first.token)).to.not.have.property('phone');
    const withPhone = await loginWith('evolution/v2.3-messages-upsert-lid-remoteJidAlt.json', { LID: lid, PHONE: digits(phone) });
    expect(withPhone.user).to.include({ id: first.user.id, phone });
    // and the phone alone (another gateway) reaches it too
    const cloud = await loginWith('cloud/text.json', { PHONE: digits(phone) });
    expect(cloud.user.id).to.equal(first.user.id);
  });

  it('Cloud API: a BSUID with and without `from`: one account; a withheld phone is answered at the BSUID on the same number', async function () {
    const bsuid = newBsuid();
    const phone = randomPhone();
    const first = await loginWith('cloud/username-with-wa-id.json', { BSUID: bsuid, PHONE: digits(phone) });
    expect(first.user.phone).to.equal(phone);
    const hidden = await loginWith('cloud/username-only.json', { BSUID: bsuid });
    expect(hidden.user).to.include({ id: first.user.id, phone });
    const reply = await delivered(w().graph, (j) => j.recipient === bsuid);
    expect(reply.url).to.equal(`/v21.0/${PNID}/messages`);
    // a person who never showed a phone signs in, and has none
    const stranger = await loginWith('cloud/username-only.json', { BSUID: newBsuid() });
    expect(stranger.user.id).to.not.equal(first.user.id);
    expect(stranger.user).to.not.have.property('phone');
  });

  it('Cloud API user_changed_number: the account moves to the new number; the old number, recycled, opens a new account', async function () {
    const bsuid = newBsuid();
    const [oldPhone, newPhone] = [randomPhone(), randomPhone()];
    const before = await loginWith('cloud/username-with-wa-id.json', { BSUID: bsuid, PHONE: digits(oldPhone) });
    await send('cloud/system-number-changed-bsuid.json', { BSUID: bsuid, PHONE: digits(oldPhone), NEWPHONE: digits(newPhone) });
    await eventually(async () => ((await w().redis.get(keys(w().stack.prefix).userByPhone(newPhone))) === before.user.id ? true : undefined), 20000);
    // the new number alone (another gateway, no user id) is the same person
    const moved = await loginWith('evolution/v2.3-messages-upsert-conversation.json', { PHONE: digits(newPhone) });
    expect(moved.user).to.include({ id: before.user.id, phone: newPhone });
    expect(await profile(before.token)).to.include({ id: before.user.id, phone: newPhone });
    // whoever is given the old number next: not the previous owner's account
    const recycled = await loginWith('cloud/username-with-wa-id.json', { BSUID: newBsuid(), PHONE: digits(oldPhone) });
    expect(recycled.user.id).to.not.equal(before.user.id);
    const alone = await loginWith('cloud/text.json', { PHONE: digits(oldPhone) });
    expect(alone.user.id).to.equal(recycled.user.id);

    // the change named without a user id (only the old number) moves it too
    const [a, b] = [randomPhone(), randomPhone()];
    const plain = await loginWith('cloud/text.json', { PHONE: digits(a) });
    await send('cloud/system-number-changed.json', { PHONE: digits(a), NEWPHONE: digits(b) });
    await eventually(async () => ((await w().redis.get(keys(w().stack.prefix).userByPhone(b))) === plain.user.id ? true : undefined), 20000);
    expect(await w().redis.get(keys(w().stack.prefix).userByPhone(a))).to.equal(null);
  });

  it('Cloud API user_changed_number with a new BSUID (2026): the new number with the new BSUID signs in to the same account; the old number opens none of it', async function () {
    const [bsuid, nextBsuid] = [newBsuid(), newBsuid()];
    const [oldPhone, newPhone] = [randomPhone(), randomPhone()];
    const k = keys(w().stack.prefix);
    const before = await loginWith('cloud/username-with-wa-id.json', { BSUID: bsuid, PHONE: digits(oldPhone) });
    await send('cloud/v2026-system-user-changed-number-bsuid.json', { BSUID: bsuid, NEWBSUID: nextBsuid, PHONE: digits(oldPhone), NEWPHONE: digits(newPhone) });
    await eventually(async () => ((await w().redis.get(k.identity('bsuid', nextBsuid))) === before.user.id ? true : undefined), 20000);
    const moved = await loginWith('cloud/username-with-wa-id.json', { BSUID: nextBsuid, PHONE: digits(newPhone) });
    expect(moved.user).to.include({ id: before.user.id, phone: newPhone });
    expect(await profile(before.token)).to.include({ id: before.user.id, phone: newPhone });
    expect(await w().redis.get(k.userByPhone(oldPhone))).to.equal(null);
    // the new BSUID alone (the number withheld) is the same person too
    expect((await loginWith('cloud/username-only.json', { BSUID: nextBsuid })).user.id).to.equal(before.user.id);
    // the old number, recycled to someone else (their own BSUID, or the number alone): a new account
    const recycled = await loginWith('cloud/username-with-wa-id.json', { BSUID: newBsuid(), PHONE: digits(oldPhone) });
    expect(recycled.user.id).to.not.equal(before.user.id);
    expect((await loginWith('cloud/text.json', { PHONE: digits(oldPhone) })).user.id).to.equal(recycled.user.id);
  });

  it('Cloud API user_changed_user_id: the new BSUID, with the same number or alone, reaches the same account', async function () {
    const [bsuid, nextBsuid] = [newBsuid(), newBsuid()];
    const phone = randomPhone();
    const k = keys(w().stack.prefix);
    const before = await loginWith('cloud/username-with-wa-id.json', { BSUID: bsuid, PHONE: digits(phone) });
    await send('cloud/v2026-system-user-changed-user-id.json', { BSUID: bsuid, NEWBSUID: nextBsuid });
    await eventually(async () => ((await w().redis.get(k.identity('bsuid', nextBsuid))) === before.user.id ? true : undefined), 20000);
    // without the change this pair (the account's number with an unknown BSUID) reads as a recycled number
    const after = await loginWith('cloud/username-with-wa-id.json', { BSUID: nextBsuid, PHONE: digits(phone) });
    expect(after.user).to.include({ id: before.user.id, phone });
    expect((await loginWith('cloud/username-only.json', { BSUID: nextBsuid })).user.id).to.equal(before.user.id);
  });

  it("a change naming another account's BSUID moves nothing, counted as a conflict; the other account stays its owner's", async function () {
    const [mine, theirs] = [newBsuid(), newBsuid()];
    const [myPhone, theirPhone, newPhone] = [randomPhone(), randomPhone(), randomPhone()];
    const k = keys(w().stack.prefix);
    const conflicts = async (): Promise<number> => {
      const r = await request(w().stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      const m = /pinauth_identity_events_total\{[^}]*event="conflict"[^}]*\} (\d+)/.exec(r.text);
      return m ? Number(m[1]) : 0;
    };
    const me = await loginWith('cloud/username-with-wa-id.json', { BSUID: mine, PHONE: digits(myPhone) });
    const them = await loginWith('cloud/username-with-wa-id.json', { BSUID: theirs, PHONE: digits(theirPhone) });
    const counted = await conflicts();
    await send('cloud/v2026-system-user-changed-number-bsuid.json', { BSUID: mine, NEWBSUID: theirs, PHONE: digits(myPhone), NEWPHONE: digits(newPhone) });
    await eventually(async () => ((await conflicts()) > counted ? true : undefined), 20000);
    await send('cloud/v2026-system-user-changed-user-id.json', { BSUID: mine, NEWBSUID: theirs });
    await eventually(async () => ((await conflicts()) > counted + 1 ? true : undefined), 20000);
    expect(await w().redis.get(k.userByPhone(myPhone))).to.equal(me.user.id);
    expect(await w().redis.get(k.userByPhone(newPhone))).to.equal(null);
    expect(await w().redis.get(k.identity('bsuid', theirs))).to.equal(them.user.id);
    expect((await loginWith('cloud/username-with-wa-id.json', { BSUID: theirs, PHONE: digits(theirPhone) })).user.id).to.equal(them.user.id);
    expect((await loginWith('cloud/username-with-wa-id.json', { BSUID: mine, PHONE: digits(myPhone) })).user.id).to.equal(me.user.id);
    expect(w().stack.workers.some((p) => p.output().includes("naming another account's identifiers"))).to.equal(true);
  });

  it("a recycled number arriving with another LID does not open the previous owner's account; the owner still signs in by their LID", async function () {
    const phone = randomPhone();
    const [owner, next] = [newLid(), newLid()];
    const first = await loginWith('evolution/v2.3-messages-upsert-lid-remoteJidAlt.json', { LID: owner, PHONE: digits(phone) });
    const newcomer = await loginWith('evolution/v2.3-messages-upsert-lid-remoteJidAlt.json', { LID: next, PHONE: digits(phone) });
    expect(newcomer.user.id).to.not.equal(first.user.id);
    expect(newcomer.user.phone).to.equal(phone);
    // the number now belongs to the newcomer; the previous owner keeps their account by LID
    const byPhone = await loginWith('cloud/text.json', { PHONE: digits(phone) });
    expect(byPhone.user.id).to.equal(newcomer.user.id);
    const ownerAgain = await loginWith('evolution/messages-upsert-lid-without-phone.json', { LID: owner });
    expect(ownerAgain.user.id).to.equal(first.user.id);
    expect(ownerAgain.user).to.not.have.property('phone');
    // logged and counted
    const m = await eventually(async () => {
      const r = await request(w().stack.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      return /pinauth_identity_events_total\{[^}]*event="recycled-refused"[^}]*\} [1-9]/.test(r.text) ? r.text : undefined;
    }, 20000);
    expect(m).to.match(/pinauth_identity_links_total\{[^}]*kind="lid"[^}]*\} [1-9]/);
    expect(w().stack.workers.some((p) => p.output().includes('recycled number'))).to.equal(true);
  });

  it('Mexico 521… and 52…, Argentina 549… and 54…: one account each, answered as WhatsApp wrote the number', async function () {
    const mx = mexicanMobile();
    const viaEvolution = await loginWith('evolution/v2.3-messages-upsert-conversation.json', { PHONE: `521${mx}` });
    expect(viaEvolution.user.phone).to.equal(`+52${mx}`);
    expect((await delivered(w().evo, (j) => j.number === `521${mx}`)).url).to.equal(`/message/sendText/${INSTANCE}`);
    const viaCloud = await loginWith('cloud/text.json', { PHONE: `52${mx}` });
    expect(viaCloud.user.id).to.equal(viaEvolution.user.id);

    const ar = argentineMobile();
    const with9 = await loginWith('evolution/v2.3-messages-upsert-conversation.json', { PHONE: `549${ar}` });
    expect(with9.user.phone).to.equal(`+549${ar}`);
    const without9 = await loginWith('cloud/text.json', { PHONE: `54${ar}` });
    expect(without9.user.id).to.equal(with9.user.id);
  });

  it('an account known by its phone keeps its id and its sessions when a LID joins it', async function () {
    const phone = randomPhone();
    const plain = await loginWith('evolution/v2.3-messages-upsert-conversation.json', { PHONE: digits(phone) });
    const withLid = await loginWith('evolution/v2.3-messages-upsert-lid-remoteJidAlt.json', { LID: newLid(), PHONE: digits(phone) });
    expect(withLid.user.id).to.equal(plain.user.id);
    expect(await profile(plain.token)).to.include({ id: plain.user.id });
  });

  it("never silent: a LID-only sender with an unknown code is told so at the LID's chat on its instance", async function () {
    const lid = newLid();
    await send('evolution/messages-upsert-lid-without-phone.json', { LID: lid, TEXT: `PIN: ${randomEmoji()}` });
    const reply = await delivered(w().evo, (j) => j.number === `${lid}@lid` && String(j.text).includes('unknown'));
    expect(reply.url).to.equal(`/message/sendText/${INSTANCE}`);
  });

  it('no process logged an error', function () {
    for (const p of [...w().stack.webs, ...w().stack.workers]) {
      const bad = p
        .output()
        .split('\n')
        .filter((l) => / error:/.test(l));
      expect(bad, `${p.role}:\n${bad.join('\n')}`).to.deep.equal([]);
    }
  });
}

function gatewaysEnv(evo: FakeGateway, graph: FakeGateway): Record<string, string> {
  return {
    MESSAGING_PROVIDER: 'evolution,cloud',
    EVOLUTION_API_URL: evo.url,
    EVOLUTION_API_KEY: EVO_KEY,
    EVOLUTION_INSTANCES: INSTANCE,
    WHATSAPP_TOKEN: GRAPH_TOKEN,
    WHATSAPP_PHONE_NUMBER_IDS: PNID,
    GRAPH_API_URL: `${graph.url}/v21.0`,
    WEBHOOK_JWT_KEY: JWT_KEY,
    WEBHOOK_SECRET: APP_SECRET,
    METRICS_TOKEN,
    // the worker's identity counters reach the web node's /metrics within a second, not five
    METRICS_INTERVAL_MS: '1000',
  };
}

describe('identity: one account per person across gateways and payload shapes (one Redis)', function () {
  this.timeout(60000);
  let world: World;

  before(async function () {
    const evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: [INSTANCE] });
    const graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: [PNID] });
    const stack = await startStack({ name: 'identity', env: gatewaysEnv(evo, graph) });
    world = { stack, evo, graph, redis: testRedis() };
  });
  after(async function () {
    world?.redis.disconnect();
    await world?.stack.stop();
    await world?.evo.close();
    await world?.graph.close();
  });

  scenarios(() => world);
});

describe('identity: the same on a 3-primary Redis Cluster', function () {
  this.timeout(120000);
  let world: World;
  let topo: ClusterTopology | undefined;

  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
    const evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: [INSTANCE] });
    const graph = await startFakeGraph({ token: GRAPH_TOKEN, phoneNumberIds: [PNID] });
    const stack = await startStack({ name: 'identity-cl', env: { ...topo.env(), ...gatewaysEnv(evo, graph) } });
    const redis = new Cluster(topo.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    world = { stack, evo, graph, redis };
  });
  after(async function () {
    world?.redis.disconnect();
    await world?.stack.stop();
    await world?.evo.close();
    await world?.graph.close();
    await topo?.stop();
  });

  scenarios(() => world);
});
