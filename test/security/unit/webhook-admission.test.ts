import { expect } from 'chai';
import { WebhookAdmission } from '../../../src/security/webhook-admission.js';

const MIB = 1024 * 1024;

/** The webhook's admission alone: requests in flight per IP group, unauthenticated bytes per node and per group. */
describe('security: webhook admission (unit)', function () {
  it('admits perGroup requests of one group at once, others unaffected, and again once one leaves', function () {
    const a = new WebhookAdmission(2, 32 * MIB, MIB);
    expect([a.enter('x'), a.enter('x'), a.enter('x'), a.enter('y')]).to.deep.equal([true, true, false, true]);
    a.leave('x');
    expect(a.enter('x')).to.equal(true);
  });

  it('one group holds at most an eighth of the bytes (4 of 32 MiB); strangers together half of them; given back, they are free again', function () {
    const a = new WebhookAdmission(128, 32 * MIB, MIB);
    expect(a.left('x')).to.equal(4 * MIB);
    expect(a.take('x', 4 * MIB)).to.equal(true);
    expect(a.take('x', 1)).to.equal(false);
    for (let g = 0; g < 3; g++) expect(a.take(`g${g}`, 4 * MIB), `g${g}`).to.equal(true);
    // four strangers hold the strangers' 16 MiB: a fifth gets nothing
    expect(a.left('z')).to.equal(0);
    expect(a.take('z', 1)).to.equal(false);
    a.give('x', 4 * MIB);
    expect(a.left('z')).to.equal(4 * MIB);
    expect(a.left('x')).to.equal(4 * MIB);
  });

  it('a network that sent an authenticated webhook keeps its share while strangers hold all theirs, for an hour', function () {
    let now = 0;
    const a = new WebhookAdmission(128, 32 * MIB, MIB, () => now);
    a.vouched('gateway');
    for (let g = 0; g < 8; g++) a.take(`g${g}`, 4 * MIB);
    expect(a.left('stranger')).to.equal(0);
    expect(a.left('gateway')).to.equal(4 * MIB);
    expect(a.take('gateway', 4 * MIB)).to.equal(true);
    a.give('gateway', 4 * MIB);
    // a stranger's bytes given back after it became known free the strangers' half all the same
    a.vouched('g0');
    a.give('g0', 4 * MIB);
    expect(a.left('stranger')).to.equal(4 * MIB);
    now += 60 * 60 * 1000;
    expect(a.isKnown('gateway')).to.equal(false);
  });

  it('a group may always hold one whole body when the node has room, however small the budget', function () {
    const a = new WebhookAdmission(128, 2 * MIB, MIB);
    expect(a.left('x')).to.equal(MIB);
    const tiny = new WebhookAdmission(128, MIB / 2, MIB);
    expect(tiny.left('x')).to.equal(MIB / 2);
  });
});
