import { expect } from 'chai';
import { loadConfig } from '../../../src/config.js';
import { keys as makeKeys } from '../../../src/redis/keys.js';
import { Scripts } from '../../../src/redis/scripts.js';
import { emojiHash, isEmojiString, normalEmojiHash, normaliseEmoji } from '../../../src/registrations/emoji.js';
import { deriveEmojiStrings, drawEmojiStrings, drawnBits, EMOJI_ALPHABET } from '../../../src/registrations/emoji-alphabet.js';
import { PinHasher, pinBits } from '../../../src/registrations/pin.js';
import { candidatesPerRound } from '../../../src/registrations/service.js';
import { ipGroup } from '../../../src/security/ip-group.js';
import { newShortId } from '../../../src/ids.js';
import { randomBase64url, randomByte } from '../../../src/random.js';
import { check as checkFlow } from '../../../src/registrations/steps.js';
import { Limits, type BudgetSet } from '../../../src/security/limits.js';
import { cleanPrefix, testRedis, uniquePrefix } from '../../helpers/redis.js';

/** The pieces of the no-oracle, atomic-budget design, one by one (budgets against real Redis). */
describe('security unit: IP groups, PIN strength, the emoji alphabet, the budget library', function () {
  it('groups IPv6 by a prefix (default /64), keeps IPv4 per address, maps ::ffff:a.b.c.d to IPv4', function () {
    expect(ipGroup('203.0.113.7', 64)).to.equal('203.0.113.7');
    expect(ipGroup('2001:db8:1:2:aaaa:bbbb:cccc:dddd', 64)).to.equal('2001:db8:1:2::/64');
    expect(ipGroup('2001:0DB8:0001:0002::1', 64)).to.equal('2001:db8:1:2::/64');
    expect(ipGroup('2001:db8:1:2::1', 48)).to.equal('2001:db8:1::/48');
    expect(ipGroup('2001:db8:1:2ff::1', 56)).to.equal('2001:db8:1:200::/56');
    expect(ipGroup('2001:db8::1', 128)).to.equal('2001:db8::1/128');
    expect(ipGroup('2001:0:0:1:0:0:0:1', 128)).to.equal('2001:0:0:1::1/128');
    expect(ipGroup('1:0:0:2:0:0:3:4', 128)).to.equal('1::2:0:0:3:4/128');
    expect(ipGroup('1:2:3:4:5:6:0:8', 128)).to.equal('1:2:3:4:5:6:0:8/128');
    expect(ipGroup('::ffff:203.0.113.7', 64)).to.equal('203.0.113.7');
    expect(ipGroup('::ffff:cb00:7107', 64)).to.equal('203.0.113.7');
    expect(ipGroup('fe80::1%eth0', 64)).to.equal('fe80::/64');
    expect(ipGroup('::1', 64)).to.equal('::/64');
    expect(ipGroup('2001:0:0:5::1', 64)).to.equal('2001:0:0:5::/64');
    expect(ipGroup('not-an-ip', 64)).to.equal('not-an-ip');
  });

  it('estimates PIN strength: short or simple PINs score low, random ones high', function () {
    expect(pinBits('1234')).to.be.below(20);
    expect(pinBits('12345678')).to.be.below(64);
    expect(pinBits('password1234')).to.be.below(64);
    expect(pinBits('aaaaaaaaaaaaaaaaaaaaaaaa')).to.be.below(64);
    expect(pinBits('k3y-9f2a-41c7')).to.be.above(64);
    expect(pinBits('Tl0PgBG7ah1HeCAaLo_lyQ')).to.be.above(120);
  });

  it('PIN strength is the documented formula: class pool × length capped at twice the distinct characters', function () {
    // the formula written plainly, against the one-pass version the register path runs
    const plain = (pin: string): number => {
      const pool = (/[0-9]/.test(pin) ? 10 : 0) + (/[a-z]/.test(pin) ? 26 : 0) + (/[A-Z]/.test(pin) ? 26 : 0) + (/[^0-9a-zA-Z]/.test(pin) ? 32 : 0);
      return pool === 0 ? 0 : Math.min(pin.length, 2 * new Set(pin).size) * Math.log2(pool);
    };
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    const samples = ['', '0000', 'aA0!', 'zzzzZZZZ9999~~~~', printable, printable.repeat(2).slice(0, 128)];
    for (let i = 0; i < 2000; i++) {
      // random PINs from narrow and wide alphabets, so repeats and every class mix occur
      const from = Math.floor(Math.random() * 90);
      const alphabet = printable.slice(from, from + 1 + Math.floor(Math.random() * 94));
      const length = 4 + Math.floor(Math.random() * 60);
      samples.push(Array.from({ length }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join(''));
    }
    for (const pin of samples) expect(pinBits(pin), pin).to.equal(plain(pin));
  });

  it('the alphabet: 64 distinct single emoji, each a valid, already normal emoji string', function () {
    expect(EMOJI_ALPHABET).to.have.length(64);
    expect(new Set(EMOJI_ALPHABET).size).to.equal(64);
    for (const e of EMOJI_ALPHABET) {
      expect([...e], e).to.have.length(1);
      expect(isEmojiString(e), e).to.equal(true);
      expect(normaliseEmoji(e), e).to.equal(e);
    }
    const [drawn = ''] = drawEmojiStrings(1, 6);
    expect([...drawn]).to.have.length(6);
    expect(isEmojiString(drawn)).to.equal(true);
    expect(drawnBits(6)).to.equal(36);
  });

  it('drawn strings: every symbol equally likely, each string already normal (hashed as the matching hashes it)', function () {
    const strings = drawEmojiStrings(1600, 8);
    expect(strings).to.have.length(1600);
    const counts = new Map<string, number>();
    for (const text of strings) {
      const symbols = [...text];
      expect(symbols).to.have.length(8);
      for (const e of symbols) counts.set(e, (counts.get(e) ?? 0) + 1);
    }
    // 12,800 draws over 64 symbols: 200 expected each; a biased or truncated draw (half the
    // alphabet, a skewed byte mapping) falls far outside, a fair one practically never does
    expect(counts.size).to.equal(64);
    for (const [e, n] of counts) expect(n, e).to.be.within(120, 290);
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - 200) ** 2 / 200, 0);
    expect(chiSquare).to.be.below(130); // 63 degrees of freedom: p < 1e-6 above this
    expect(new Set(strings).size).to.equal(1600);
    for (const text of strings.slice(0, 50)) expect(normalEmojiHash(text)).to.equal(emojiHash(text));
  });

  it('random ids and bytes from one read-ahead block: 128-bit ids never repeat across many refills, bytes cover 0–255, more than a block refused', function () {
    const ids = Array.from({ length: 3000 }, () => newShortId());
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids) expect(id).to.match(/^[A-Za-z0-9_-]{22}$/);
    // interleaved with single bytes, so draws of both kinds cross the block's boundary at every offset
    const seen = new Set<number>();
    for (let i = 0; i < 20000; i++) {
      seen.add(randomByte());
      if (i % 7 === 0) expect(randomBase64url(16)).to.have.length(22);
    }
    expect(seen.size).to.equal(256);
    expect(() => randomBase64url(4097)).to.throw(RangeError);
  });

  it('derived strings (keyed attempts): the same PIN and key give the same strings, anything else others, every symbol equally likely', function () {
    const hasher = new PinHasher('a-pin-hash-key-of-enough-length-0123456789');
    const derive = (pin: string, key: string) => deriveEmojiStrings(hasher.attempt(pin, key).seed, 3, 8);
    expect(derive('pin-a', 'key-1')).to.deep.equal(derive('pin-a', 'key-1'));
    expect(derive('pin-a', 'key-1')[0]).to.not.equal(derive('pin-a', 'key-2')[0]);
    expect(derive('pin-a', 'key-1')[0]).to.not.equal(derive('pin-b', 'key-1')[0]);
    // another server key: other strings and another tag (nobody can make them without the key)
    const other = new PinHasher('another-pin-hash-key-of-enough-length-987654');
    expect(deriveEmojiStrings(other.attempt('pin-a', 'key-1').seed, 1, 8)[0]).to.not.equal(derive('pin-a', 'key-1')[0]);
    expect(other.attempt('pin-a', 'key-1').tag).to.not.equal(hasher.attempt('pin-a', 'key-1').tag);
    const counts = new Map<string, number>();
    for (let i = 0; i < 1600; i++) for (const e of [...derive(`pin-${i}`, 'k')[0]!]) counts.set(e, (counts.get(e) ?? 0) + 1);
    expect(counts.size).to.equal(64);
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - 200) ** 2 / 200, 0);
    expect(chiSquare).to.be.below(130);
  });

  it('candidates per round: one from 40 bits up (EMOJI_LENGTH 7+), four below, so three rounds all taken stay out of reach', function () {
    expect([4, 5, 6, 7, 8, 16].map(candidatesPerRound)).to.deep.equal([4, 4, 4, 1, 1, 1]);
    // the worst case each rule is meant for: 10 million pending registrations
    const pending = 10_000_000;
    for (const length of [4, 5, 6, 7, 8]) {
      const taken = Math.min(1, pending / 2 ** drawnBits(length));
      const roundTaken = taken ** candidatesPerRound(length);
      if (length >= 7) expect(taken, `length ${length}`).to.be.below(1e-5);
      // three rounds all taken: never with a sane length (below 1 in 10^12 from 5 emoji up)
      if (length >= 5) expect(roundTaken ** 3, `length ${length}`).to.be.below(1e-12);
    }
  });

  describe('budgets in the scripts (real Redis)', function () {
    const prefix = uniquePrefix('sec-budgets');
    const redis = testRedis();
    const scripts = new Scripts(redis);
    const keys = makeKeys(prefix);
    const cfg = loadConfig({ KEY_PREFIX: prefix }).rateLimits;
    const limits = new Limits(redis, keys, { ...cfg, unknownPinPer10Minutes: 5, checkPerMinute: 8, checkPinBurst: 3, checkPinPerSecond: 1 });
    after(async function () {
      redis.disconnect();
      await cleanPrefix(prefix);
    });
    const checkWith = (set: BudgetSet, pinHash: string) => checkFlow(scripts, keys, set, pinHash, 0);
    const check = (group: string, pinHash: string) => checkWith(limits.forCheck(group, pinHash), pinHash).then((o) => o.kind);

    it('50 concurrent wrong guesses: exactly the wrong-guess budget is answered, the rest refused', async function () {
      const outs = await Promise.all(Array.from({ length: 50 }, (_, i) => check('g1', `h${i}`)));
      expect(outs.filter((o) => o === 'not_found')).to.have.length(5);
      expect(outs.filter((o) => o === 'limited')).to.have.length(45);
    });

    it('all or nothing: a request refused by one budget spends none of the others', async function () {
      // the PIN's budget (3) runs out first; the group's check budget (8) keeps the rest
      await redis.hset(keys.registration('held'), 'pinId', 'id', 'expiresAt', Date.now() + 60_000, 'state', 'pending');
      const outs = [];
      for (let i = 0; i < 6; i++) outs.push(await check('g2', 'held'));
      expect(outs).to.deep.equal(['pending', 'pending', 'pending', 'limited', 'limited', 'limited']);
      expect(await redis.get(keys.groupBudget('check', 'g2'))).to.equal('3');
      // found PINs spend no wrong guess
      expect(await redis.exists(keys.groupBudget('unknownpin', 'g2'))).to.equal(0);
    });

    it("all or nothing within a group: a later budget's refusal gives back what the earlier ones took", async function () {
      // the group's check budget is counted before its wrong-guess budget is looked at
      const tight = new Limits(redis, keys, { ...cfg, unknownPinPer10Minutes: 2, checkPerMinute: 100, checkPinBurst: 100, checkPinPerSecond: 100 });
      const group = 'g4';
      const guess = async (i: number) => (await checkWith(tight.forCheck(group, `w${i}`), `w${i}`)).kind;
      expect([await guess(0), await guess(1)]).to.deep.equal(['not_found', 'not_found']);
      const checkKey = keys.groupBudget('check', group);
      const guessKey = keys.groupBudget('unknownpin', group);
      const windowLeft = await redis.pttl(checkKey);
      for (let i = 2; i < 6; i++) expect(await guess(i)).to.equal('limited');
      expect(await redis.get(checkKey)).to.equal('2');
      expect(await redis.get(guessKey)).to.equal('2');
      // the given-back point left the window where it was (it did not start a new one)
      expect(await redis.pttl(checkKey)).to.be.within(windowLeft - 5_000, windowLeft);
      // a budget that refuses the very first request leaves no counter behind
      const none = new Limits(redis, keys, { ...cfg, unknownPinPer10Minutes: 100, checkPerMinute: 0 });
      const fresh = 'g5';
      const out = await checkWith(none.forCheck(fresh, 'v'), 'v');
      expect(out.kind).to.equal('limited');
      expect(await redis.exists(keys.groupBudget('check', fresh), keys.groupBudget('unknownpin', fresh))).to.equal(0);
    });

    it('a refusal says which budget and how long to wait', async function () {
      const set = limits.forCheck('g3', 'x');
      const out = await checkWith(set, 'held-none');
      expect(out.kind).to.equal('not_found');
      for (let i = 0; i < 4; i++) await check('g3', `y${i}`);
      const limited = await checkWith(limits.forCheck('g3', 'z'), 'z');
      if (limited.kind !== 'limited') throw new Error(`not limited: ${limited.kind}`);
      const { limit, error } = limits.refusal(set, limited.waitMs, limited.index);
      expect(limit).to.equal('guess');
      expect(error.retryAfter).to.be.within(599, 600);
    });
  });
});
