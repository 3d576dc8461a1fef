import { expect } from 'chai';
import { KeyRing } from '../../../src/auth/key-ring.js';
import { TokenService } from '../../../src/auth/tokens.js';
import { ConfigError, loadConfig, VERIFIED_ACCESS_TOKENS } from '../../../src/config.js';

const SECRET = 'unit-secret-0123456789abcdef0123456789';
const SETTINGS = { issuer: 'pin-auth', accessTtl: 900, refreshTtl: 3600 };

/** A token service whose signature checks are counted (the ring's one key, HS256). */
function counted(settings: ConstructorParameters<typeof TokenService>[0] = SETTINGS): {
  tokens: TokenService;
  checks: () => number;
  issue: (n: number) => string[];
} {
  const ring = KeyRing.hmac(SECRET);
  const key = ring.active;
  const original = key.verify;
  let checks = 0;
  key.verify = (input, signature) => {
    checks++;
    return original(input, signature);
  };
  const tokens = new TokenService(settings, ring);
  // signed as a worker signs them (not remembered): the web node sees each for the first time
  const issue = (n: number): string[] => Array.from({ length: n }, (_, i) => tokens.issuePair(`user-${i}`, `sid-${i}`, ['user'], `jti-${i}`).token);
  return { tokens, checks: () => checks, issue };
}

/** The verified-access-token cache of TokenService: what is checked again and what is not. */
describe('core unit: verified access tokens', function () {
  it('checks an access token once, then answers it from memory (its claims the same)', function () {
    const { tokens, checks, issue } = counted();
    const [token] = issue(1);
    const first = tokens.verify(token!, 'access');
    const second = tokens.verify(token!, 'access');
    expect(checks()).to.equal(1);
    expect(second).to.deep.equal(first);
  });

  it('a pair this node signed with `remember` is not checked when its access token comes back', function () {
    const { tokens, checks } = counted();
    const pair = tokens.issuePair('user-1', 'sid-1', ['user'], 'jti-1', { remember: true });
    expect(tokens.verify(pair.token, 'access').sub).to.equal('user-1');
    expect(checks()).to.equal(0);
  });

  it('uses the whole bound: 6,000 clients polling in turn are each checked once', function () {
    // the two generations of Maps this cache was held between half the bound and the bound: one
    // request in five of this load was a signature check (an ES256 verification in production)
    const { tokens, checks, issue } = counted();
    const polled = issue(6000);
    for (let round = 0; round < 3; round++) for (const token of polled) tokens.verify(token, 'access');
    expect(checks()).to.equal(6000);
  });

  it('past the bound, the least recently used token is checked again, a recently used one is not', function () {
    const { tokens, checks, issue } = counted();
    const all = issue(VERIFIED_ACCESS_TOKENS + 1);
    const [oldest, second] = all;
    for (const token of all.slice(0, VERIFIED_ACCESS_TOKENS)) tokens.verify(token, 'access');
    tokens.verify(second!, 'access'); // used again: now the most recent
    tokens.verify(all[VERIFIED_ACCESS_TOKENS]!, 'access'); // one more than the bound: the least recent goes
    const before = checks();
    tokens.verify(second!, 'access');
    expect(checks(), 'a recently used token stays').to.equal(before);
    tokens.verify(oldest!, 'access');
    expect(checks(), 'the least recently used token left').to.equal(before + 1);
  });

  it('a token being exchanged (refresh-token) is neither remembered nor made recent', function () {
    const { tokens, checks, issue } = counted();
    const [exchanged] = issue(1);
    tokens.verify(exchanged!, 'access', { allowExpired: true, replacing: true });
    tokens.verify(exchanged!, 'access', { allowExpired: true, replacing: true });
    expect(checks(), 'not remembered').to.equal(2);

    // a remembered token presented for exchange is still answered from memory, but stays where it was
    const all = issue(VERIFIED_ACCESS_TOKENS + 1);
    for (const token of all.slice(0, VERIFIED_ACCESS_TOKENS)) tokens.verify(token, 'access');
    const before = checks();
    tokens.verify(all[0]!, 'access', { allowExpired: true, replacing: true });
    expect(checks(), 'answered from memory').to.equal(before);
    tokens.verify(all[VERIFIED_ACCESS_TOKENS]!, 'access');
    tokens.verify(all[0]!, 'access');
    expect(checks(), 'not made recent: it was the first out').to.equal(before + 2);
  });

  it('another key ring forgets every remembered token', function () {
    const { tokens, checks, issue } = counted();
    const [token] = issue(1);
    tokens.verify(token!, 'access');
    const ring = KeyRing.hmac(SECRET);
    tokens.useKeys(ring);
    let again = 0;
    const original = ring.active.verify;
    ring.active.verify = (input, signature) => {
      again++;
      return original(input, signature);
    };
    tokens.verify(token!, 'access');
    expect(checks()).to.equal(1);
    expect(again).to.equal(1);
  });

  it('VERIFIED_TOKEN_CACHE sets the bound (default 10,000); 0 remembers nothing', function () {
    expect(loadConfig({}).verifiedTokenCache).to.equal(VERIFIED_ACCESS_TOKENS);
    expect(loadConfig({ VERIFIED_TOKEN_CACHE: '0' }).verifiedTokenCache).to.equal(0);
    expect(() => loadConfig({ VERIFIED_TOKEN_CACHE: '-1' })).to.throw(ConfigError, /VERIFIED_TOKEN_CACHE/);

    const none = counted({ ...SETTINGS, verifiedCache: 0 });
    const [token] = none.issue(1);
    const signed = none.tokens.issuePair('user-9', 'sid-9', ['user'], 'jti-9', { remember: true });
    for (const t of [token!, token!, signed.token]) none.tokens.verify(t, 'access');
    expect(none.checks(), 'every use checked').to.equal(3);

    const three = counted({ ...SETTINGS, verifiedCache: 3 });
    const four = three.issue(4);
    for (const t of [...four.slice(0, 3), ...four.slice(0, 3)]) three.tokens.verify(t, 'access');
    expect(three.checks(), 'three fit').to.equal(3);
    three.tokens.verify(four[3]!, 'access');
    three.tokens.verify(four[0]!, 'access');
    expect(three.checks(), 'a fourth pushes the least recent out').to.equal(5);
  });
});
