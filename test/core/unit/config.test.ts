import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { ROOT } from '../../helpers/processes.js';

const SECRET = 'x'.repeat(32);

/** The config module: defaults, one clear line for each bad value, production's refusals. */
describe('core unit: config', function () {
  it('has the DESIGN.md defaults', function () {
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
  ];
  for (const [name, env, pattern] of bad) {
    it(`refuses ${name}`, function () {
      expect(() => loadConfig(env)).to.throw(ConfigError, pattern);
    });
  }

  it('production needs JWT_SECRET and an authenticated webhook', function () {
    expect(() => loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET: 's' })).to.throw(ConfigError, /JWT_SECRET/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET })).to.throw(ConfigError, /WEBHOOK_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: SECRET, WEBHOOK_JWT_KEY: 'k' }).production).to.equal(true);
  });

  /** Runs an entry point with `env` and returns its exit code and output. */
  const run = (script: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> =>
    new Promise((resolve) => {
      const child = spawn('node', [script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });

  const refusals: [string, string, Record<string, string>, RegExp][] = [
    ['web', 'dist/src/bin/web.js', { NODE_ENV: 'production', WEBHOOK_SECRET: 'whsec' }, /JWT_SECRET is required/],
    ['worker', 'dist/src/bin/worker.js', { NODE_ENV: 'production', JWT_SECRET: SECRET }, /WEBHOOK_SECRET or WEBHOOK_JWT_KEY is required/],
    ['all', 'dist/src/bin/all.js', { PORT: 'eighty' }, /PORT must be a whole number/],
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
