import { expect } from 'chai';
import type { LoginResult } from '../../src/registrations/login-result.js';
import { LoginChain } from '../../src/auth/login-chain.js';
import type { ClaimReply } from '../../src/redis/scripts.js';
import { LoginProcessor } from '../../src/auth/login.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import type { Caller } from '../../src/registrations/service.js';
import { emojiHash } from '../../src/registrations/emoji.js';
import type { Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { startServices, stopServices } from '../helpers/services.js';
import { TEST_JWT_SECRET } from './support.js';

const me: Caller = { ip: '127.0.0.1', via: 'http' };

/** A claim run one step per call that dies before its `after`-th call, as a worker killed between two steps. */
class CrashingChain extends LoginChain {
  calls = 0;
  constructor(
    services: Services,
    private readonly after: number,
  ) {
    super(services.scripts, services.keys, true);
  }
  protected override step(step: string, keys: string[], json: string): Promise<ClaimReply> {
    if (this.calls++ >= this.after) return Promise.reject(new Error(`crashed before ${step}`));
    return super.step(step, keys, json);
  }
}

/**
 * On a cluster the claim is a chain of one-slot calls (lib/login-steps.lua). A worker can die
 * between any two: its job's retry (same nonce) must finish that login, and leave exactly what
 * one uninterrupted login leaves: one session, the emoji string and the question freed, the
 * PIN out of the active set. Run here on one server, one step per call, cut at every step.
 */
describe('core: the login chain cut between any two steps finishes on retry', function () {
  let services: Services;
  const settings = (confirm: boolean) => ({ graceSeconds: 120, confirm, stepwise: true });
  before(async function () {
    services = await startServices('core-steps', { JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async () => stopServices(services));

  const job = (phone: string, text: string): InboundJob => ({
    message: { provider: 'evolution', id: randomPin().slice(4), phone, text, displayName: 'Step Wise' },
    nonce: randomPin(),
    receivedAt: Date.now(),
  });
  const processor = (confirm: boolean, chain?: LoginChain) =>
    new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, settings(confirm), chain);

  /** Cuts `run` before call 1, 2, … until a run is not cut; returns how many cuts there were. */
  const everyCut = async (run: (crashing: LoginProcessor, whole: LoginProcessor) => Promise<boolean>, confirm: boolean): Promise<number> => {
    for (let after = 1; after < 30; after++) {
      const chain = new CrashingChain(services, after);
      const cut = await run(processor(confirm, chain), processor(confirm));
      if (!cut) return after - 1;
    }
    throw new Error('the chain never finished');
  };

  /** What one finished login leaves, checked in Redis. */
  const expectOneLogin = async (pin: string, emoji: string, phone: string) => {
    const k = services.keys;
    const checked = await services.registrations.check(pin, me);
    expect(checked.state).to.equal('verified');
    if (checked.state !== 'verified') return;
    const result = JSON.parse(checked.resultJson) as LoginResult;
    const userId = result.user.id;
    expect(checked.userId).to.equal(userId);
    expect(await services.redis.get(k.userByPhone(phone))).to.equal(userId);
    expect(await services.redis.zcard(k.userSessions(userId))).to.equal(1);
    expect(await services.redis.get(k.emoji(emoji))).to.equal(null);
    expect(await services.redis.get(k.confirmation(phone))).to.equal(null);
    const claims = await services.sessions.authenticate(result.token);
    expect(claims.sub).to.equal(userId);
  };

  it('a code login: every cut, then the retry signs in once', async function () {
    this.timeout(30000);
    const cuts = await everyCut(async (crashing, whole) => {
      const pin = randomPin();
      const emoji = randomEmoji();
      const phone = randomPhone();
      await services.registrations.register(pin, emoji, me);
      const j = job(phone, `PIN: ${emoji}`);
      let cut = false;
      await crashing.process(j).catch(() => (cut = true));
      const retry = await whole.process(j);
      expect(retry.outcome, `after a cut: ${retry.outcome}`).to.equal('logged-in');
      expect((await whole.process({ ...j, nonce: randomPin() })).outcome).to.equal('duplicate');
      if (retry.outcome === 'logged-in')
        expect(await services.redis.zscore(services.keys.active(services.keys.activeBucket(retry.pinHash)), retry.pinHash)).to.equal(null);
      await expectOneLogin(pin, emojiHash(emoji), phone);
      return cut;
    }, false);
    // msg, lookup, phone, reg, mark, freeEmoji, inactive, user: cut before each but the first
    expect(cuts).to.be.at.least(7);
  });

  it('a returning user: every cut keeps the one user', async function () {
    this.timeout(30000);
    const phone = randomPhone();
    let userId = '';
    await everyCut(async (crashing, whole) => {
      const pin = randomPin();
      const emoji = randomEmoji();
      await services.registrations.register(pin, emoji, me);
      const j = job(phone, `PIN: ${emoji}`);
      let cut = false;
      await crashing.process(j).catch(() => (cut = true));
      const retry = await whole.process(j);
      expect(retry.outcome).to.equal('logged-in');
      if (retry.outcome === 'logged-in') {
        userId ||= retry.result.user.id;
        expect(retry.result.user.id).to.equal(userId);
      }
      return cut;
    }, false);
  });

  it('YES in the chat: every cut of the answer, then the retry signs in once and the question is gone', async function () {
    this.timeout(30000);
    const cuts = await everyCut(async (crashing, whole) => {
      const pin = randomPin();
      const emoji = randomEmoji();
      const phone = randomPhone();
      await services.registrations.register(pin, emoji, me);
      expect((await whole.process(job(phone, `PIN: ${emoji}`))).outcome).to.equal('confirmation-asked');
      const yes = job(phone, 'yes');
      let cut = false;
      await crashing.process(yes).catch(() => (cut = true));
      expect((await whole.process(yes)).outcome).to.equal('logged-in');
      await expectOneLogin(pin, emojiHash(emoji), phone);
      return cut;
    }, true);
    expect(cuts).to.be.at.least(8);
  });

  it('NO in the chat: every cut, then the retry denies, and the emoji string and the question are freed', async function () {
    this.timeout(30000);
    await everyCut(async (crashing, whole) => {
      const pin = randomPin();
      const emoji = randomEmoji();
      const phone = randomPhone();
      await services.registrations.register(pin, emoji, me);
      expect((await whole.process(job(phone, `PIN: ${emoji}`))).outcome).to.equal('confirmation-asked');
      const no = job(phone, 'no');
      let cut = false;
      await crashing.process(no).catch(() => (cut = true));
      expect((await whole.process(no)).outcome).to.equal('denied');
      expect(await services.redis.get(services.keys.emoji(emojiHash(emoji)))).to.equal(null);
      expect(await services.redis.get(services.keys.confirmation(phone))).to.equal(null);
      expect((await whole.process(job(phone, 'yes'))).outcome).to.equal('unanswered');
      return cut;
    }, true);
  });
});
