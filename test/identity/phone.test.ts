import { expect } from 'chai';
import { canonicalPhone } from '../../src/identity/phone.js';

describe('identity: canonical phone numbers', function () {
  it('Mexico: 521 + 10 digits and 52 + the same digits are one number, +52…', function () {
    expect(canonicalPhone('5215512345678')).to.equal('+525512345678');
    expect(canonicalPhone('525512345678')).to.equal('+525512345678');
    expect(canonicalPhone('+52 55 1234 5678')).to.equal('+525512345678');
  });

  it('Argentina: 54 + 10 digits whose 549 form is a valid mobile is that mobile, +549…', function () {
    for (const local of ['1123456789', '1150123456', '1187654321', '3514567890']) {
      expect(canonicalPhone(`549${local}`), local).to.equal(`+549${local}`);
      expect(canonicalPhone(`54${local}`), local).to.equal(`+549${local}`);
    }
  });

  it('a number libphonenumber does not know (Buenos Aires 11 9xxx xxxx, +1 555) is kept as written', function () {
    expect(canonicalPhone('5491190123456')).to.equal('+5491190123456');
    expect(canonicalPhone('541190123456')).to.equal('+541190123456');
    expect(canonicalPhone('15555550100')).to.equal('+15555550100');
  });

  it('no phone: too short, too long, letters', function () {
    for (const raw of ['123456', '1234567890123456', '54abc1190123', '']) expect(canonicalPhone(raw), raw).to.equal(null);
  });
});
