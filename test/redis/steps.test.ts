import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { keys as makeKeys } from '../../src/redis/keys.js';
import { luaString } from '../../src/redis/phase-plans.js';
import { Scripts } from '../../src/redis/scripts.js';
import { cancelCleanupSteps, cancelSteps, checkSteps, registerSteps, type RegisterRequest } from '../../src/registrations/steps.js';
import { Limits } from '../../src/security/limits.js';
import { cleanPrefix, testRedis, uniquePrefix } from '../helpers/redis.js';

/**
 * One step source, three runners: a phase compiled into a plan (its fixed arguments as literals,
 * a single Redis), the same phase composed with every argument sent, and the same steps one call
 * each (a cluster, here on one Redis) give the same answers and leave the same keys, for
 * register, check, cancel and their budgets.
 */
describe('redis: steps composed into one script and run one call each agree', function () {
  const redis = testRedis();
  const prefixes: string[] = [];
  after(async function () {
    redis.disconnect();
    for (const p of prefixes) await cleanPrefix(p);
  });

  /** A register (created, existing, decoy), checks (wrong, right, limited), a cancel; answers with times and ms left masked. */
  type Runner = 'plans' | 'composed' | 'split';
  async function run(runner: Runner): Promise<{ answers: string[][]; keys: string[] }> {
    const split = runner === 'split';
    const prefix = uniquePrefix(`steps-${runner}`);
    prefixes.push(prefix);
    const keys = makeKeys(prefix);
    const scripts = new Scripts(redis, { split, plans: runner === 'plans' });
    const limits = new Limits(redis, keys, { ...loadConfig({ KEY_PREFIX: prefix }).rateLimits, unknownPinPer10Minutes: 3 });
    const h = 'Hsteps0000000000000000';
    const e = 'Esteps0000000000000000';
    const r: RegisterRequest = { pinHash: h, emojiHash: e, mode: 'client', newPinId: 'id1', ttlMs: 60_000, memoryMs: 60_000, origin: 'o', candidates: [] };
    const check = (pin: string) => scripts.phase('check', checkSteps(keys, limits.forCheck('g', pin), pin, 0, split));
    const answers: string[][] = [];
    // times and ms left depend on the clock: only their presence is compared
    const keep = (out: string[]) => answers.push(out.map((v) => (/^\d{4,}$/.test(v) ? '<ms>' : v)));
    keep(await scripts.phase('register', registerSteps(keys, limits.forRegister('g'), r, split)));
    keep(await scripts.phase('register', registerSteps(keys, limits.forRegister('g'), r, split)));
    keep(await scripts.phase('register', registerSteps(keys, limits.forRegister('g'), { ...r, emojiHash: 'Eother', newPinId: 'id2' }, split)));
    for (const pin of ['Hwrong1', h, 'Hwrong2', 'Hwrong3', 'Hwrong4']) keep(await check(pin));
    const found = await scripts.phase('cancel', cancelSteps(keys, limits.forCancel('g2'), h, split));
    keep(found);
    const [, pinId = '', state = '', emojiHash = '', phone = '', sid = '', userId = ''] = found;
    keep(await scripts.phase('cancel-cleanup', cancelCleanupSteps(keys, h, { pinId, state, emojiHash, phone, sid, userId })));
    const left: string[] = [];
    for (const k of [keys.registration(h), keys.emoji(e), keys.groupBudget('register', 'g'), keys.groupBudget('check', 'g'), keys.groupBudget('unknownpin', 'g'), keys.pinBudget('checkpin', h)]) {
      left.push(`${k.slice(prefix.length)}=${(await redis.exists(k)) ? await redis.get(k).catch(() => 'hash') : '-'}`);
    }
    return { answers, keys: left };
  }

  it('register, check (wrong, right, limited), cancel: the same answers and keys', async function () {
    const plans = await run('plans');
    const composed = await run('composed');
    const split = await run('split');
    expect(composed).to.deep.equal(plans);
    expect(split).to.deep.equal(plans);
    expect(plans.answers.map((a) => a[0])).to.deep.equal(['created', 'existing', 'decoy', 'not_found', 'pending', 'not_found', 'not_found', 'limited', 'cancelled', 'cancelled']);
  });

  it('plans: one per shape, never one per request; a plan call sends only its unique keys and varying arguments', async function () {
    const prefix = uniquePrefix('steps-shapes');
    prefixes.push(prefix);
    const keys = makeKeys(prefix);
    const scripts = new Scripts(redis);
    const limits = new Limits(redis, keys, loadConfig({ KEY_PREFIX: prefix }).rateLimits);
    for (let i = 0; i < 40; i++) {
      const r: RegisterRequest = { pinHash: `Hshape${i}`, emojiHash: `Eshape${i}`, mode: 'client', newPinId: `id${i}`, ttlMs: 60_000, memoryMs: 60_000, origin: `device ${i}\n10.0.0.x`, candidates: [] };
      expect((await scripts.phase('register', registerSteps(keys, limits.forRegister(`g${i % 7}`), r, false)))[0]).to.equal('created');
      expect((await scripts.phase('check', checkSteps(keys, limits.forCheck(`g${i % 7}`, r.pinHash), r.pinHash, 20_000, false)))[0]).to.equal('pending');
      // a server that checks for itself spends no budget: a shape of its own
      expect((await scripts.phase('check', checkSteps(keys, limits.none(), r.pinHash, 20_000, false)))[0]).to.equal('pending');
    }
    expect(scripts.plans.size).to.equal(3);
    const call = scripts.plans.plan('check', checkSteps(keys, limits.forCheck('g', 'Hx'), 'Hx', 20_000, false));
    expect(call?.keys).to.deep.equal([keys.groupBudget('check', 'g'), keys.groupBudget('unknownpin', 'g'), keys.registration('Hx'), keys.pinBudget('checkpin', 'Hx')]);
    expect(call?.args).to.deep.equal([]);
  });

  it('a fixed argument reaches Lua as the same string, whatever its bytes', async function () {
    for (const text of ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'emoji 🍎 and é', '', '1000000']) {
      expect(await redis.eval(`return ${luaString(text)}`, 0)).to.equal(text);
    }
  });
});
