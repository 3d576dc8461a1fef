import { keys } from '../../src/redis/keys.js';
import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually, get, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { evolutionJobId, keysUnder, register, stackQueue, waitVerified as waitVerifiedAt } from './support.js';

/**
 * The worker side of a login: what a chat message must look like to match, whose phone it is,
 * users made once per phone, and atomic matching under duplicate and racing deliveries.
 * Two workers, so races between processes are real.
 */
describe('core: chat messages to logins', function () {
  let stack: InProcessStack;
  let inbound: Queue;
  before(async function () {
    stack = await startStack({ inProcess: true, name: 'core-hook', webs: 1, workers: 2, env: { CHAT_REPLIES: 'false' } });
    inbound = stackQueue(stack.prefix, 'inbound');
  });
  after(async function () {
    await inbound?.close();
    await stack?.stop();
  });

  const check = (pin: string) => post<LoginBody>(stack.url, '/check-login', { pin });
  const waitVerified = (pin: string): Promise<LoginBody> => waitVerifiedAt(stack.url, pin);
  /** Waits until the inbound job of a delivery has finished and returns the worker's outcome. */
  const outcomeOf = (rawId: string): Promise<string> =>
    eventually(async () => {
      const job = await inbound.getJob(evolutionJobId('test-instance', rawId));
      return job?.finishedOn ? String(job.returnvalue) : undefined;
    });

  it('takes the text from extendedTextMessage and tolerates case and spaces around the colon', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    await sendChat(stack.url, `  pin :  ${emoji} `, { extended: true });
    expect((await waitVerified(pin)).verified).to.equal(true);
  });

  it('matches the bare emoji string', async function () {
    const pin = randomPin();
    const emoji = randomEmoji(3);
    await register(stack.url, pin, emoji);
    await sendChat(stack.url, emoji);
    expect((await waitVerified(pin)).verified).to.equal(true);
  });

  it('finds the phone of an @lid sender in remoteJidAlt', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    await sendChat(stack.url, `PIN: ${emoji}`, { remoteJid: '190234567890123@lid', remoteJidAlt: '5511987654321@s.whatsapp.net' });
    const login = await waitVerified(pin);
    expect(login.user.phone).to.equal('+5511987654321');
  });

  it('a message from me, a group message and a sender with no identifier match nothing', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    // neither a phone nor a LID (an address of no kind we know): ignored at the door
    const nobody = await sendChat(stack.url, `PIN: ${emoji}`, { remoteJid: '190234567890124@unknown.example' });
    expect(nobody.status, nobody.text).to.equal(200);
    expect(nobody.body).to.include({ accepted: 0, ignored: 1 });
    expect((await sendChat(stack.url, `PIN: ${emoji}`, { fromMe: true })).status).to.equal(200);
    expect((await sendChat(stack.url, `PIN: ${emoji}`, { remoteJid: '120363025246125486@g.us' })).status).to.equal(200);
    const other = `OTHER${randomPin().slice(4)}`;
    await sendChat(stack.url, 'PIN: not emoji', { id: other });
    expect(await outcomeOf(other)).to.equal('not-a-code');
    expect((await check(pin)).body.verified).to.equal(false);
  });

  it('creates a user once per phone, named from pushName', async function () {
    const phone = randomPhone();
    const logins: LoginBody[] = [];
    for (const pushName of ['Grace Brewster Hopper', 'Someone Else']) {
      const pin = randomPin();
      const emoji = randomEmoji();
      await register(stack.url, pin, emoji);
      await sendChat(stack.url, `PIN: ${emoji}`, { phone, pushName });
      logins.push(await waitVerified(pin));
    }
    expect(logins[1]!.user.id).to.equal(logins[0]!.user.id);
    const profile = await get(stack.url, '/profile', logins[1]!.token);
    expect(profile.body.user).to.deep.include({ name: 'Grace', surname: 'Brewster Hopper', phone, roles: ['user'] });
  });

  it('a gateway delivering the same message twice at once makes one login', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    await register(stack.url, pin, emoji);
    const id = `DUP${randomPin().slice(4)}`;
    const phone = randomPhone();
    const answers = await Promise.all([1, 2, 3].map(() => sendChat(stack.url, `PIN: ${emoji}`, { id, phone })));
    for (const a of answers) expect(a.status, a.text).to.equal(200);
    const login = await waitVerified(pin);
    expect(await sessionsOf(login.user.id)).to.equal(1);
  });

  it('a repeat delivery after the login was collected does not verify a new registration with that emoji string', async function () {
    const emoji = randomEmoji();
    const id = `LATE${randomPin().slice(4)}`;
    const phone = randomPhone();
    const first = randomPin();
    await register(stack.url, first, emoji);
    await sendChat(stack.url, `PIN: ${emoji}`, { id, phone });
    await waitVerified(first);

    const second = randomPin();
    expect((await register(stack.url, second, emoji)).status).to.equal(200);
    // The finished job is kept for an hour and would swallow the repeat at the door; drop it, as
    // time would, so the worker's own 24-hour memory of message ids is what is tested.
    await outcomeOf(id);
    await (await inbound.getJob(evolutionJobId('test-instance', id)))!.remove();
    expect((await sendChat(stack.url, `PIN: ${emoji}`, { id, phone })).status).to.equal(200);
    expect(await outcomeOf(id)).to.equal('duplicate');
    expect((await check(second)).body.verified).to.equal(false);
  });

  it('two registrations and racing messages make exactly one login per registration', async function () {
    const regs = [0, 1].map(() => ({ pin: randomPin(), emoji: randomEmoji() }));
    for (const r of regs) expect((await register(stack.url, r.pin, r.emoji)).status).to.equal(200);
    const phones = [0, 1, 2, 3, 4, 5].map(() => randomPhone());
    await Promise.all(regs.flatMap((r) => phones.map((phone) => sendChat(stack.url, `PIN: ${r.emoji}`, { phone }))));
    const logins = await Promise.all(regs.map((r) => waitVerified(r.pin)));
    // every message has been handled before we count
    await eventually(async () => {
      const c = await inbound.getJobCounts('waiting', 'active', 'delayed');
      return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0 ? true : undefined;
    });
    let sessions = 0;
    for (const phone of phones) {
      const uid = await userIdOf(phone);
      if (uid) sessions += await sessionsOf(uid);
    }
    expect(sessions).to.equal(2);
    expect(logins.map((l) => l.user.phone).every((p) => phones.includes(p))).to.equal(true);
  });

  async function userIdOf(phone: string): Promise<string | null> {
    const redis = testRedis();
    try {
      return await redis.get(keys(stack.prefix).userByPhone(phone));
    } finally {
      redis.disconnect();
    }
  }

  async function sessionsOf(userId: string): Promise<number> {
    const redis = testRedis();
    try {
      let n = 0;
      for (const key of await keysUnder(stack.prefix, 'sess:*')) {
        if ((await redis.hget(key, 'userId')) === userId) n += 1;
      }
      return n;
    } finally {
      redis.disconnect();
    }
  }
});
