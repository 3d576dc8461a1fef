import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { keys as makeKeys } from '../../src/redis/keys.js';
import { Scripts } from '../../src/redis/scripts.js';
import { cancelCleanupSteps, cancelSteps, checkSteps, registerSteps, type RegisterRequest } from '../../src/registrations/steps.js';
import { Limits } from '../../src/security/limits.js';
import { cleanPrefix, testRedis, uniquePrefix } from '../helpers/redis.js';

/**
 * One step source, two runners: a phase composed into one script (a single Redis) and the same
 * steps one call each (a cluster, here on one Redis) give the same answers and leave the same
 * keys, for register, check, cancel and their budgets.
 */
describe('redis: steps composed into one script and run one call each agree', function () {
  const redis = testRedis();
  const prefixes: string[] = [];
  after(async function () {
    redis.disconnect();
    for (const p of prefixes) await cleanPrefix(p);
  });

  /** A register (created, existing, decoy), checks (wrong, right, limited), a cancel; answers with times and ms left masked. */
  type Runner = 'composed' | 'split';
  async function run(runner: Runner): Promise<{ answers: string[][]; keys: string[] }> {
    const split = runner === 'split';
    const prefix = uniquePrefix(`steps-${runner}`);
    prefixes.push(prefix);
    const keys = makeKeys(prefix);
    const scripts = new Scripts(redis, { split });
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
    const composed = await run('composed');
    const split = await run('split');
    expect(split).to.deep.equal(composed);
    expect(composed.answers.map((a) => a[0])).to.deep.equal(['created', 'existing', 'decoy', 'not_found', 'pending', 'not_found', 'not_found', 'limited', 'cancelled', 'cancelled']);
  });
});
