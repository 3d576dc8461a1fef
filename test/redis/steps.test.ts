import { readdirSync } from 'node:fs';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { keys as makeKeys } from '../../src/redis/keys.js';
import { SCRIPT_NAMES, Scripts, scriptSource } from '../../src/redis/scripts.js';
import { cancelCleanup, cancelFind, check, register, type RegisterRequest, type RegisterResult } from '../../src/registrations/steps.js';
import { Limits } from '../../src/security/limits.js';
import { cleanPrefix, testRedis, uniquePrefix } from '../helpers/redis.js';

/**
 * The scripts as files: each one static, opening with its contract, its includes expanded at
 * load; and the sequences of register, check and cancel (registrations/steps.ts) on one Redis,
 * with the answers and the keys they leave (test/redis/cluster-scripts.test.ts runs them on a
 * cluster).
 */
describe('redis: static scripts and the sequences of register, check, cancel', function () {
  const redis = testRedis();
  const prefixes: string[] = [];
  after(async function () {
    redis.disconnect();
    for (const p of prefixes) await cleanPrefix(p);
  });

  it('every script file is defined once, opens with its name and contract, and has its includes expanded', function () {
    const files = readdirSync(new URL('../../src/redis/scripts/', import.meta.url))
      .filter((f) => f.endsWith('.lua'))
      .map((f) => f.slice(0, -4));
    expect([...SCRIPT_NAMES].sort()).to.deep.equal(files.sort());
    for (const name of SCRIPT_NAMES) {
      const source = scriptSource(name);
      expect(source, name).to.not.match(/^--- @include/m);
      // the intake scripts (src/messaging's) keep their own header
      if (name.startsWith('intake-')) continue;
      expect(source.split('\n')[0], name).to.match(new RegExp(`^-- ${name}: `));
      expect(source, name).to.match(/^-- KEYS/m);
      expect(source, name).to.match(/^-- (?:.*; )?ARGV/m);
      expect(source, name).to.match(/^-- Reply\b/m);
    }
  });

  it('register (created, existing, decoy), check (wrong, right, limited), cancel: answers and keys', async function () {
    const prefix = uniquePrefix('steps');
    prefixes.push(prefix);
    const keys = makeKeys(prefix);
    const scripts = new Scripts(redis);
    const limits = new Limits(redis, keys, { ...loadConfig({ KEY_PREFIX: prefix }).rateLimits, unknownPinPer10Minutes: 3 });
    const h = 'Hsteps0000000000000000';
    const e = 'Esteps0000000000000000';
    const r: RegisterRequest = { pinHash: h, emojiHash: e, mode: 'client', newPinId: 'id1', ttlMs: 60_000, memoryMs: 60_000, origin: 'o', candidates: [] };
    const outcome = (out: RegisterResult) => (out.kind === 'answer' ? out.outcome : out.kind);
    expect(outcome(await register(scripts, keys, limits.forRegister('g'), r))).to.equal('created');
    expect(outcome(await register(scripts, keys, limits.forRegister('g'), r))).to.equal('existing');
    expect(outcome(await register(scripts, keys, limits.forRegister('g'), { ...r, emojiHash: 'Eother', newPinId: 'id2' }))).to.equal('decoy');
    // the decoy counted in the active set as a creation would, and holds no string
    expect(await redis.zscore(keys.active(keys.activeBucket(h)), '~id2')).to.not.equal(null);
    expect(await redis.exists(keys.emoji('Eother'))).to.equal(0);
    const checks = [];
    for (const pin of ['Hwrong1', h, 'Hwrong2', 'Hwrong3', 'Hwrong4']) checks.push((await check(scripts, keys, limits.forCheck('g', pin), pin, 0)).kind);
    expect(checks).to.deep.equal(['not_found', 'pending', 'not_found', 'not_found', 'limited']);
    // three wrong guesses spent, the right one's reserved point given back, the refused one's too
    expect(await redis.get(keys.groupBudget('unknownpin', 'g'))).to.equal('3');
    expect(await redis.get(keys.groupBudget('check', 'g'))).to.equal('4');
    const found = await cancelFind(scripts, keys, limits.forCancel('g2'), h);
    if (found.kind !== 'cancelled') throw new Error(`not found: ${found.kind}`);
    expect(found).to.deep.include({ pinId: 'id1', state: 'pending', emojiHash: e, askedOf: '', sessionId: '', userId: '' });
    expect(await cancelCleanup(scripts, keys, h, found)).to.equal('cancelled');
    expect(await redis.exists(keys.registration(h), keys.emoji(e))).to.equal(0);
    expect(await redis.zscore(keys.active(keys.activeBucket(h)), h)).to.equal(null);
    expect(await redis.get(keys.groupBudget('unknownpin', 'g2')), 'a found PIN spends no wrong guess').to.equal(null);
  });

  it('a script called with another number of keys than it declares is refused before it reaches Redis', async function () {
    const scripts = new Scripts(redis);
    let err: unknown;
    await scripts.run('emoji-hold', ['k1', 'k2'], []).catch((e: unknown) => (err = e));
    expect(String(err)).to.match(/takes 1 keys, given 2/);
  });
});
