import { expect } from 'chai';
import { LoginChain } from '../../src/auth/login-chain.js';
import type { ClaimReply } from '../../src/redis/scripts.js';
import { LoginProcessor, type LoginOutcome } from '../../src/auth/login.js';
import type { InboundJob, InboundMessage } from '../../src/queues/jobs.js';
import type { Caller } from '../../src/registrations/service.js';
import type { Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { startServices, stopServices } from '../helpers/services.js';
import { TEST_JWT_SECRET } from '../core/support.js';

const me: Caller = { ip: '127.0.0.1', via: 'http' };
const newLid = (): string => String(100000000000000 + Math.floor(Math.random() * 8e14));

/**
 * A chain run one step per call (as on a cluster) that, before its first link is written, lets
 * another message run whole: the other message changes a key this one has read, as a second
 * worker handling the same person at the same moment would.
 */
class RacedChain extends LoginChain {
  steps: string[] = [];
  private raced = false;
  constructor(
    services: Services,
    private readonly meanwhile: () => Promise<unknown>,
  ) {
    super(services.scripts, services.keys, true);
  }
  protected override async step(step: string, keys: string[], json: string): Promise<ClaimReply> {
    this.steps.push(step);
    if (step === 'idset' && !this.raced) {
      this.raced = true;
      await this.meanwhile();
    }
    return super.step(step, keys, json);
  }
}

/**
 * The identity steps of the login chain in this process against a real Redis: a question asked
 * of a sender known by a LID alone, STOP by LID, and the compare-and-set of links racing another
 * message of the same person (the cluster's case, one step per call).
 */
describe('identity: the chain steps (confirmation, STOP, racing links)', function () {
  let services: Services;
  before(async function () {
    services = await startServices('id-chain', { JWT_SECRET: TEST_JWT_SECRET });
  });
  after(async () => stopServices(services));

  const job = (sender: Partial<InboundMessage>, text: string): InboundJob => ({
    message: { provider: 'evolution', id: randomPin().slice(4), phone: null, text, displayName: 'Ida Lid', ...sender },
    nonce: randomPin(),
    receivedAt: Date.now(),
  });
  const processor = (confirm: boolean, chain?: LoginChain) =>
    new LoginProcessor(
      services.scripts,
      services.keys,
      services.tokens,
      services.sessions,
      { graceSeconds: 120, confirm, stepwise: chain !== undefined },
      chain,
    );
  const userOf = (o: LoginOutcome): string => (o.outcome === 'logged-in' ? o.result.user.id : `(${o.outcome})`);
  const code = async (): Promise<string> => {
    const emoji = randomEmoji();
    await services.registrations.register(randomPin(), emoji, me);
    return `PIN: ${emoji}`;
  };

  it('confirmation: a LID-only sender is asked; YES from another LID finds nothing, YES from the same LID signs in with no phone', async function () {
    const lid = newLid();
    const p = processor(true);
    expect((await p.process(job({ lid }, await code()))).outcome).to.equal('confirmation-asked');
    expect((await p.process(job({ lid: newLid() }, 'YES'))).outcome).to.equal('unanswered');
    const yes = await p.process(job({ lid }, 'YES'));
    expect(yes.outcome).to.equal('logged-in');
    if (yes.outcome === 'logged-in') expect(yes.result.user).to.not.have.property('phone');
  });

  it('STOP from a LID closes every session of its account, those opened by phone included', async function () {
    const lid = newLid();
    const phone = randomPhone();
    const p = processor(false);
    const a = await p.process(job({ lid, phone }, await code()));
    const b = await p.process(job({ phone }, await code()));
    expect(userOf(b)).to.equal(userOf(a));
    const stop = await p.process(job({ lid }, 'STOP'));
    expect(stop).to.deep.equal({ outcome: 'signed-out', sessions: 2, userId: userOf(a) });
    expect(await services.redis.zcard(services.keys.userSessions(userOf(a)))).to.equal(0);
  });

  it('racing links (one step per call): a message whose keys changed after it read them reads again; one account, every identifier on it', async function () {
    const lid = newLid();
    const phone = randomPhone();
    const k = services.keys;
    let other: LoginOutcome | undefined;
    // meanwhile the phone alone signs in (another gateway): it makes the account first
    const chain = new RacedChain(services, async () => (other = await processor(false).process(job({ phone }, await code()))));
    const mine = await processor(false, chain).process(job({ lid, phone }, await code()));
    expect(mine.outcome).to.equal('logged-in');
    expect(other?.outcome).to.equal('logged-in');
    // the phone's key changed between the read and the write: the identifiers were read again
    expect(chain.steps.filter((s) => s === 'idget').length).to.be.greaterThan(2);
    const uid = userOf(mine);
    expect(await services.redis.get(k.identity('lid', lid))).to.equal(uid);
    expect(await services.redis.get(k.identity('phone', phone))).to.equal(uid);
    // the LID came first, so this account is the LID's; the phone joined it from the other
    const record = await services.redis.hgetall(k.user(uid));
    expect(record).to.include({ 'id:lid': lid, phone });
  });

  it("a number change naming another user id than the old number's account moves nothing", async function () {
    const [oldPhone, newPhone] = [randomPhone(), randomPhone()];
    const p = processor(false);
    const owner = await p.process(job({ userId: `US.${newLid()}`, phone: oldPhone }, await code()));
    const change = await p.process(job({ userId: `US.${newLid()}`, phone: newPhone, previousPhone: oldPhone, numberChanged: true }, ''));
    expect(change).to.deep.equal({ outcome: 'number-changed', userId: '', changed: false, conflict: true });
    expect(await services.redis.get(services.keys.userByPhone(oldPhone))).to.equal(userOf(owner));
    expect(await services.redis.get(services.keys.userByPhone(newPhone))).to.equal(null);
  });

  it("a change giving a BSUID that is another account's moves nothing, the number neither", async function () {
    const [oldPhone, newPhone, otherPhone] = [randomPhone(), randomPhone(), randomPhone()];
    const [mine, theirs] = [`US.${newLid()}`, `US.${newLid()}`];
    const p = processor(false);
    const owner = await p.process(job({ userId: mine, phone: oldPhone }, await code()));
    const other = await p.process(job({ userId: theirs, phone: otherPhone }, await code()));
    const change = await p.process(job({ userId: mine, newUserId: theirs, phone: newPhone, previousPhone: oldPhone, numberChanged: true }, ''));
    expect(change).to.deep.equal({ outcome: 'number-changed', userId: '', changed: false, conflict: true });
    expect(await services.redis.get(services.keys.userByPhone(oldPhone))).to.equal(userOf(owner));
    expect(await services.redis.get(services.keys.userByPhone(newPhone))).to.equal(null);
    expect(await services.redis.get(services.keys.identity('bsuid', theirs))).to.equal(userOf(other));
    expect(await services.redis.hget(services.keys.user(userOf(owner)), 'id:bsuid')).to.equal(mine);
  });

  it('a phone spelled as WhatsApp writes it (a Mexican 521…) reaches the canonical account', async function () {
    const mx = `55${String(Math.floor(1e7 + Math.random() * 9e7))}`;
    const p = processor(false);
    const canonical = await p.process(job({ phone: `+52${mx}` }, await code()));
    const legacy = await p.process(job({ phone: `+521${mx}` }, await code()));
    expect(userOf(legacy)).to.equal(userOf(canonical));
    expect(await services.redis.exists(services.keys.userByPhone(`+521${mx}`))).to.equal(0);
  });
});
