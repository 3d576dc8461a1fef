import { expect } from 'chai';
import { describeDevice, maskIp, originOf } from '../../../src/registrations/origin.js';
import { remembered } from '../../../src/remembered.js';

/** Answers of a pure function remembered, bounded (src/remembered.ts): origins, IP groups, emoji. */
describe('remembered answers', function () {
  it('asks the function once per input while it is remembered, and answers the same', function () {
    const asked: string[] = [];
    const upper = remembered((s: string) => {
      asked.push(s);
      return s.toUpperCase();
    }, 3);
    expect([upper('a'), upper('b'), upper('a'), upper('b')]).to.deep.equal(['A', 'B', 'A', 'B']);
    expect(asked).to.deep.equal(['a', 'b']);
  });

  it('remembers at most `max` inputs: past that it starts again, and still answers right', function () {
    const asked: string[] = [];
    const id = remembered((s: string) => {
      asked.push(s);
      return s;
    }, 2);
    for (const s of ['a', 'b', 'c', 'a', 'c']) expect(id(s)).to.equal(s);
    // 'c' found the map full and cleared it, so 'a' was asked again; 'c' was kept after the clear
    expect(asked).to.deep.equal(['a', 'b', 'c', 'a']);
  });

  it('remembers falsy answers too (an emoji test answering false)', function () {
    let calls = 0;
    const never = remembered(() => {
      calls++;
      return false;
    }, 4);
    expect([never('x'), never('x')]).to.deep.equal([false, false]);
    expect(calls).to.equal(1);
  });

  it('origins: the same names as describeDevice and maskIp, whatever the length of the User-Agent', function () {
    const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
    for (let i = 0; i < 2; i++) expect(originOf(chrome, '203.0.113.7')).to.deep.equal({ device: 'Chrome on Windows', ip: '203.0.113.x' });
    // only the part describeDevice reads is kept: a huge header is named as its first 512 characters are
    const huge = `${'x'.repeat(600)} Firefox/120.0 (Android)`;
    expect(originOf(huge, undefined)).to.deep.equal({ device: describeDevice(huge), ip: maskIp(undefined) });
    expect(originOf(huge, undefined).device).to.equal('unknown device');
    expect(originOf(undefined, '2001:db8:85a3:1234::1')).to.deep.equal({ device: 'unnamed app', ip: '2001:db8:85a3::/48' });
  });
});
