import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { ROOT } from '../../helpers/processes.js';

const SECRET = 'x'.repeat(32);

/** The config module: defaults, one clear line for each bad value, production's refusals. */
describe('core unit: config', function () {
  it('has the documented defaults', function () {
    const c = loadConfig({});
    expect(c).to.deep.include({
      port: 3000,
      redisUrl: 'redis://127.0.0.1:6379',
      keyPrefix: 'pinauth',
      accessTokenTtl: 900,
      refreshTokenTtl: 2592000,
      pinTtlSeconds: 180,
      messagingProvider: 'log',
      trustProxy: false,
      logLevel: 'info',
      production: false,
    });
    expect(c.verifiedGraceSeconds).to.be.at.least(60);
    expect(c.expiredMemorySeconds).to.be.at.least(3600);
    expect(c.rateLimits).to.deep.include({ registerPerMinute: 30, checkPerMinute: 120, checkPinPerSecond: 1, checkPinBurst: 2 });
    expect(loadConfig({ DYNO: 'web.1' }).instanceName).to.equal('web.1');
    expect(loadConfig({ DYNO: 'web.1', INSTANCE_NAME: 'mine' }).instanceName).to.equal('mine');
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['a PORT that is not a number', { PORT: 'eighty' }, /PORT/],
    ['a PORT out of range', { PORT: '70000' }, /PORT/],
    ['a PIN_TTL_SECONDS of 0', { PIN_TTL_SECONDS: '0' }, /PIN_TTL_SECONDS/],
    ['a negative ACCESS_TOKEN_TTL', { ACCESS_TOKEN_TTL: '-5' }, /ACCESS_TOKEN_TTL/],
    ['a REDIS_URL of another scheme', { REDIS_URL: 'http://localhost:6379' }, /REDIS_URL/],
    ['a REDIS_URL that is not a URL', { REDIS_URL: 'not a url' }, /REDIS_URL/],
    ['a short JWT_SECRET', { JWT_SECRET: 'short' }, /JWT_SECRET/],
    ['a KEY_PREFIX with spaces', { KEY_PREFIX: 'a b' }, /KEY_PREFIX/],
    ['an unknown MESSAGING_PROVIDER', { MESSAGING_PROVIDER: 'pigeon' }, /MESSAGING_PROVIDER/],
    ['evolution without its settings', { MESSAGING_PROVIDER: 'evolution', EVOLUTION_API_URL: 'http://x' }, /EVOLUTION_API_KEY/],
    ['cloud without its token', { MESSAGING_PROVIDER: 'cloud' }, /WHATSAPP_TOKEN/],
    ['a TRUST_PROXY that is not a boolean', { TRUST_PROXY: 'maybe' }, /TRUST_PROXY/],
    ['an unknown LOG_LEVEL', { LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    ['a password without a user', { ADMIN_PASSWORD: 'pw' }, /ADMIN_USER/],
    ['an unknown EMOJI_CHOICE', { EMOJI_CHOICE: 'anyone' }, /EMOJI_CHOICE/],
    ['an EMOJI_LENGTH below 4', { EMOJI_LENGTH: '3' }, /EMOJI_LENGTH/],
    ['a RATE_IPV6_PREFIX over 128', { RATE_IPV6_PREFIX: '129' }, /RATE_IPV6_PREFIX/],
  ];
  for (const [name, env, pattern] of bad) {
    it(`refuses ${name}`, function () {
      expect(() => loadConfig(env)).to.throw(ConfigError, pattern);
    });
  }

  it('signing keys: ES256 by default, HS256 or JWT_KEYS by configuration, with one clear line on a bad key', function () {
    expect(loadConfig({}).jwtAlgorithm).to.equal('ES256');
    expect(loadConfig({ JWT_ALGORITHM: 'HS256' }).jwtAlgorithm).to.equal('HS256');
    expect(() => loadConfig({ JWT_ALGORITHM: 'RS256' })).to.throw(ConfigError, /JWT_ALGORITHM/);
    expect(() => loadConfig({ JWT_KEYS: '[]' })).to.throw(ConfigError, /JWT_KEYS/);
    expect(() => loadConfig({ JWT_KEYS: '[{"kty":"EC"}]' })).to.throw(ConfigError, /JWT_KEYS/);
    expect(() => loadConfig({ JWT_ACTIVE_KID: 'k' })).to.throw(ConfigError, /JWT_ACTIVE_KID/);
    expect(loadConfig({ NODE_ENV: 'production', PIN_HASH_KEY: SECRET, WEBHOOK_SECRET: 'w'.repeat(32) }).pinHashKey).to.equal(SECRET);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_ALGORITHM: 'HS256', PIN_HASH_KEY: SECRET, WEBHOOK_SECRET: 'w'.repeat(32) })).to.throw(
      ConfigError,
      /JWT_SECRET/,
    );
    expect(loadConfig({ JWT_SECRET: SECRET }).pinHashKey, 'PINs keyed as before when PIN_HASH_KEY is unset').to.equal(SECRET);
  });

  it('registration policy: clients may choose emoji strings in development; production draws them and wants strong PINs', function () {
    expect(loadConfig({}).registration).to.deep.equal({ emojiChoice: 'client', emojiLength: 8, pinMinBits: 0 });
    expect(loadConfig({}).rateLimits.ipv6PrefixLength).to.equal(64);
    const prod = loadConfig({ NODE_ENV: 'production', PIN_HASH_KEY: SECRET, WEBHOOK_SECRET: 'w'.repeat(32) });
    expect(prod.registration).to.deep.equal({ emojiChoice: 'server', emojiLength: 8, pinMinBits: 64 });
    const relaxed = loadConfig({ NODE_ENV: 'production', PIN_HASH_KEY: SECRET, WEBHOOK_SECRET: 'w'.repeat(32), EMOJI_CHOICE: 'client', PIN_MIN_BITS: '0' });
    expect(relaxed.registration).to.include({ emojiChoice: 'client', pinMinBits: 0 });
  });

  it('production needs JWT_SECRET and an authenticated webhook', function () {
    expect(() => loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET: 's' })).to.throw(ConfigError, /JWT_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET })).to.throw(ConfigError, /WEBHOOK_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET, WEBHOOK_JWT_KEY: 'k'.repeat(32) }).production).to.equal(true);
  });

  it("an OpenID client's login-page colours: #rrggbb or a clear line at start", function () {
    const clients = (extra: object) => JSON.stringify([{ client_id: 'app', redirect_uris: ['https://app.example/cb'], ...extra }]);
    expect(loadConfig({ OIDC_CLIENTS: clients({ brand_color: '#075e54', brand_background_color: '#FFFFFF' }) }).oidc!.clients[0]).to.include({
      brand_color: '#075e54',
    });
    for (const bad of ['red', '#fff', '#12345g', 7]) {
      expect(() => loadConfig({ OIDC_CLIENTS: clients({ brand_color: bad }) }), String(bad)).to.throw(
        ConfigError,
        /brand_color of client app must be a colour like #075e54/,
      );
    }
    expect(() => loadConfig({ OIDC_CLIENTS: clients({ brand_background_color: 'black' }) })).to.throw(ConfigError, /brand_background_color/);
  });

  it("in production an OpenID client's secret is as long as the service's own secrets", function () {
    const env = (secret: string) => ({
      NODE_ENV: 'production',
      JWT_SECRET: SECRET,
      WEBHOOK_JWT_KEY: 'k'.repeat(32),
      OIDC_ISSUER: 'https://auth.example/oidc',
      OIDC_CLIENTS: JSON.stringify([{ client_id: 'app', client_secret: secret, redirect_uris: ['https://app.example/cb'] }]),
    });
    expect(() => loadConfig(env('s'.repeat(31)))).to.throw(ConfigError, /client_secret of client app must be at least 32 bytes when NODE_ENV=production/);
    expect(loadConfig(env('s'.repeat(32))).oidc!.clients).to.have.length(1);
    // a public client has no secret; outside production a short one is a developer's choice
    expect(
      loadConfig({
        ...env(''),
        OIDC_CLIENTS: JSON.stringify([{ client_id: 'spa', token_endpoint_auth_method: 'none', redirect_uris: ['https://app.example/cb'] }]),
      }).oidc,
    ).to.not.equal(undefined);
    expect(
      loadConfig({ OIDC_CLIENTS: JSON.stringify([{ client_id: 'app', client_secret: 'x', redirect_uris: ['https://app.example/cb'] }]) }).oidc,
    ).to.not.equal(undefined);
  });

  it('each OpenID client_id once', function () {
    const client = { client_id: 'app', redirect_uris: ['https://app.example/cb'] };
    expect(() => loadConfig({ OIDC_CLIENTS: JSON.stringify([client, { ...client, redirect_uris: ['https://other.example/cb'] }]) })).to.throw(
      ConfigError,
      /OIDC_CLIENTS: client_id app appears more than once/,
    );
  });

  it("OIDC_ISSUER's host must be one ALLOWED_HOSTS takes", function () {
    const env = (issuer: string, hosts: string) => ({
      OIDC_ISSUER: issuer,
      ALLOWED_HOSTS: hosts,
      OIDC_CLIENTS: JSON.stringify([{ client_id: 'app', redirect_uris: ['https://app.example/cb'] }]),
    });
    expect(() => loadConfig(env('https://auth.example.com/oidc', 'www.example.com,localhost'))).to.throw(
      ConfigError,
      /OIDC_ISSUER's host auth\.example\.com is not in ALLOWED_HOSTS/,
    );
    expect(loadConfig(env('https://Auth.Example.com:8443/oidc', 'auth.example.com')).oidc).to.not.equal(undefined);
    expect(loadConfig(env('http://127.0.0.1:3000/oidc', 'auth.example.com')).oidc).to.not.equal(undefined);
    expect(loadConfig(env('http://[::1]:3000/oidc', 'auth.example.com')).oidc).to.not.equal(undefined);
    expect(loadConfig(env('https://auth.example.com/oidc', '')).oidc).to.not.equal(undefined);
    for (const issuer of ['https://auth.example.com/oidc?tenant=1', 'https://auth.example.com/oidc#x', 'https://auth.example.com/oidc?']) {
      expect(() => loadConfig(env(issuer, '')), issuer).to.throw(ConfigError, /OIDC_ISSUER must have no query or fragment/);
    }
  });

  it('refuses a WEBHOOK_JWT_KEY equal to JWT_SECRET, in any environment', function () {
    expect(() => loadConfig({ JWT_SECRET: SECRET, WEBHOOK_JWT_KEY: SECRET })).to.throw(ConfigError, /WEBHOOK_JWT_KEY must differ from JWT_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET, WEBHOOK_JWT_KEY: SECRET })).to.throw(ConfigError, /must differ/);
  });

  for (const name of ['WEBHOOK_SECRET', 'WEBHOOK_JWT_KEY', 'WEBHOOK_VERIFY_TOKEN', 'ADMIN_PASSWORD', 'METRICS_TOKEN']) {
    it(`refuses a ${name} shorter than 32 bytes in production only`, function () {
      const env = { JWT_SECRET: SECRET, WEBHOOK_SECRET: 'w'.repeat(32), ADMIN_USER: 'ops', [name]: 'short-secret-31-bytes-0123456789'.slice(0, 31) };
      expect(() => loadConfig({ ...env, NODE_ENV: 'production' })).to.throw(ConfigError, new RegExp(`${name} must be at least 32 bytes`));
      expect(loadConfig(env).production).to.equal(false);
      // bytes, not characters: 11 emoji are 44 bytes
      expect(loadConfig({ ...env, NODE_ENV: 'production', [name]: '🔑'.repeat(11) }).production).to.equal(true);
    });
  }

  /** Runs an entry point with `env` and returns its exit code and output. */
  const run = (script: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> =>
    new Promise((resolve) => {
      const child = spawn('node', [script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });

  const refusals: [string, string, Record<string, string>, RegExp][] = [
    ['web', 'dist/src/bin/web.js', { NODE_ENV: 'production', WEBHOOK_SECRET: 'whsec' }, /JWT_SECRET is required/],
    [
      'worker',
      'dist/src/bin/worker.js',
      { NODE_ENV: 'production', JWT_SECRET: SECRET },
      /WEBHOOK_SECRET, WEBHOOK_JWT_KEY, WEBHOOK_BEARER_KEY or WEBHOOK_PATH_SECRET is required/,
    ],
    ['all', 'dist/src/bin/all.js', { PORT: 'eighty' }, /PORT must be a whole number/],
    ['web', 'dist/src/bin/web.js', { JWT_SECRET: SECRET, WEBHOOK_JWT_KEY: SECRET }, /WEBHOOK_JWT_KEY must differ from JWT_SECRET/],
    ['worker', 'dist/src/bin/worker.js', { JWT_SECRET: SECRET, WEBHOOK_JWT_KEY: SECRET }, /WEBHOOK_JWT_KEY must differ from JWT_SECRET/],
    ['web', 'dist/src/bin/web.js', { NODE_ENV: 'production', JWT_SECRET: SECRET, WEBHOOK_SECRET: 'whsec' }, /WEBHOOK_SECRET must be at least 32 bytes/],
    [
      'all',
      'dist/src/bin/all.js',
      { NODE_ENV: 'production', JWT_SECRET: SECRET, WEBHOOK_SECRET: 'w'.repeat(32), ADMIN_USER: 'ops', ADMIN_PASSWORD: 'hunter2' },
      /ADMIN_PASSWORD must be at least 32 bytes/,
    ],
  ];
  for (const [role, script, env, pattern] of refusals) {
    it(`the ${role} process stops at start with one clear line and a non-zero exit (${pattern.source})`, async function () {
      const { code, out } = await run(script, { ...env, PORT: env.PORT ?? '0', KEY_PREFIX: 'never-used' });
      expect(code).to.not.equal(0);
      expect(code).to.not.equal(null);
      const lines = out.split('\n').filter((l) => l.trim() !== '');
      expect(lines, out).to.have.length(1);
      expect(lines[0]).to.match(pattern);
    });
  }
});
