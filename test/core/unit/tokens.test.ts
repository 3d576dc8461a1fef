import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { TokenService } from '../../../src/auth/tokens.js';
import { AppError } from '../../../src/errors.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789';

/** TokenService.verify: signature, pinned algorithm, issuer, type, expiry. */
describe('core unit: tokens', function () {
  const tokens = new TokenService({ secret: SECRET, issuer: 'pin-auth', accessTtl: 900, refreshTtl: 3600 });
  const pair = tokens.issuePair('user-1', 'sid-1', ['user'], 'jti-1');
  const now = Math.floor(Date.now() / 1000);
  const codeOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      return err instanceof AppError ? err.code : 'not an AppError';
    }
    return 'accepted';
  };
  const resign = (token: string, changes: Record<string, unknown>, key = SECRET, algorithm: jwt.Algorithm = 'HS256'): string =>
    jwt.sign({ ...(jwt.decode(token) as object), ...changes }, key, { algorithm });

  it('issues the DESIGN.md claims', function () {
    const access = tokens.verify(pair.token, 'access');
    expect(access).to.include({ sub: 'user-1', typ: 'access', sid: 'sid-1', iss: 'pin-auth' });
    expect(access.roles).to.deep.equal(['user']);
    expect(access.exp - access.iat).to.equal(900);
    expect(access.jti).to.be.a('string');
    const refresh = tokens.verify(pair.refreshToken, 'refresh');
    expect(refresh).to.include({ sub: 'user-1', typ: 'refresh', sid: 'sid-1', jti: 'jti-1' });
    expect(refresh.exp - refresh.iat).to.equal(3600);
  });

  it('refuses the wrong type, key, algorithm, issuer and unsigned tokens', function () {
    expect(codeOf(() => tokens.verify(pair.refreshToken, 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(pair.token, 'refresh'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, {}, 'other-secret-0123456789abcdef'), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, {}, SECRET, 'HS384'), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, { iss: 'evil' }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(resign(pair.token, { sid: 42 }), 'access'))).to.equal('AUTHENTICATION_FAILED');
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${pair.token.split('.')[1]}.`;
    expect(codeOf(() => tokens.verify(unsigned, 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify('garbage', 'access'))).to.equal('AUTHENTICATION_FAILED');
  });

  it('an expired access token fails unless allowed; an expired refresh token is REFRESH_TOKEN_EXPIRED', function () {
    const lapsed = resign(pair.token, { exp: now - 10 });
    expect(codeOf(() => tokens.verify(lapsed, 'access'))).to.equal('AUTHENTICATION_FAILED');
    expect(codeOf(() => tokens.verify(lapsed, 'access', { allowExpired: true }))).to.equal('accepted');
    expect(codeOf(() => tokens.verify(resign(pair.refreshToken, { exp: now - 10 }), 'refresh'))).to.equal('REFRESH_TOKEN_EXPIRED');
  });
});
