import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { eventually, post } from '../helpers/http.js';
import { ROOT, startStack, type InProcessStack } from '../helpers/processes.js';
import { PRODUCTION_ENV } from '../helpers/production.js';

const run = promisify(execFile);
const JWT_KEY = 'simulate-evolution-jwt-key-0123456789';
const APP_SECRET = 'simulate-meta-app-secret-0123456789';
const PATH_SECRET = 'simulatePathSecret_0123456789';

/** `npm run simulate`: a correctly authenticated webhook to a running service, so a login completes. */
describe('messaging: the simulate command', function () {
  let stack: InProcessStack;
  before(async function () {
    this.timeout(120000);
    stack = await startStack({
      inProcess: true,
      name: 'simulate',
      env: { WEBHOOK_JWT_KEY: JWT_KEY, WEBHOOK_SECRET: APP_SECRET, WEBHOOK_PATH_SECRET: PATH_SECRET, CHAT_REPLIES: 'false' },
    });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
  });

  async function simulate(env: Record<string, string>, args: string[]): Promise<{ code: number; out: string }> {
    try {
      const r = await run('node', [path.join(ROOT, 'dist/scripts/simulate.js'), '--url', stack.url, ...args], {
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', ...env },
      });
      return { code: 0, out: r.stdout + r.stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, out: e.stdout + e.stderr };
    }
  }

  async function loginWith(env: Record<string, string>, args: (text: string, phone: string) => string[]): Promise<{ login: LoginBody; out: string }> {
    const pin = randomPin();
    const emoji = randomEmoji(3);
    const phone = randomPhone();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const { code, out } = await simulate(env, args(`PIN: ${emoji}`, phone));
    expect(code, out).to.equal(0);
    expect(out).to.match(/200 \{"received":true,"accepted":1/);
    const login = await eventually(async () => {
      const c = await post<LoginBody>(stack.url, '/check-login', { pin });
      return c.body.verified ? c.body : undefined;
    }, 15000);
    expect(login.user.phone).to.equal(phone);
    for (const secret of [JWT_KEY, APP_SECRET, PATH_SECRET]) expect(out.includes(secret), out).to.equal(false);
    return { login, out };
  }

  it('evolution: signs in with the Evolution JWT', async function () {
    const { out } = await loginWith({ WEBHOOK_JWT_KEY: JWT_KEY }, (text, phone) => ['--gateway', 'evolution', '--from', phone, text]);
    expect(out).to.include('auth: Evolution JWT');
  });

  it('evolution by-events with only the secret path configured', async function () {
    const { out } = await loginWith({ WEBHOOK_PATH_SECRET: PATH_SECRET }, (text, phone) => ['--gateway', 'evolution', '--by-events', '--from', phone, text]);
    expect(out).to.include('/messaging-endpoint/:secret/messages-upsert');
  });

  it('cloud: signs in with the X-Hub-Signature-256 signature', async function () {
    const { out } = await loginWith({ WEBHOOK_SECRET: APP_SECRET }, (text, phone) => ['--gateway', 'cloud', '--from', phone, text]);
    expect(out).to.include('auth: X-Hub-Signature-256');
  });

  it('without --gateway, posts what MESSAGING_PROVIDER names (cloud), so the reply goes out the same way', async function () {
    const cloud = { WEBHOOK_SECRET: APP_SECRET, MESSAGING_PROVIDER: 'cloud', WHATSAPP_TOKEN: 'token', WHATSAPP_PHONE_NUMBER_ID: '1' };
    const { out } = await loginWith(cloud, (text, phone) => ['--from', phone, text]);
    expect(out).to.match(/^cloud webhook/m);
  });

  it('says what went wrong: a refused webhook, bad arguments', async function () {
    const refused = await simulate({ WEBHOOK_SECRET: 'not-the-secret' }, ['--gateway', 'cloud', '--from', randomPhone(), 'PIN: 🍎']);
    expect(refused.code).to.equal(1);
    expect(refused.out).to.include('401');
    const usage = await simulate({}, ['--gateway', 'telegram', '--from', randomPhone(), 'hi']);
    expect(usage.code).to.equal(2);
    expect(usage.out).to.include('usage: npm run simulate');
  });

  it("production: the server draws the code, and simulate (run with the service's production environment) signs in with it", async function () {
    this.timeout(60000);
    const prod = await startStack({ inProcess: true, name: 'simulate-prod', defaultLimits: true, env: { ...PRODUCTION_ENV, CHAT_REPLIES: 'false' } });
    try {
      const pin = randomPin() + randomPin();
      const reg = await post(prod.url, '/register-pin', { pin });
      expect(reg.status, reg.text).to.equal(200);
      const emoji = String(reg.body.emojiString);
      const phone = randomPhone();
      const r = await run('node', [path.join(ROOT, 'dist/scripts/simulate.js'), '--url', prod.url, '--from', phone, `PIN: ${emoji}`], {
        env: { PATH: process.env.PATH ?? '', ...PRODUCTION_ENV },
      });
      expect(r.stdout)
        .to.include('auth: Evolution JWT')
        .and.match(/200 \{"received":true,"accepted":1/);
      const login = await eventually(async () => {
        const c = await post<LoginBody>(prod.url, '/check-login', { pin });
        return c.body.verified ? c.body : undefined;
      }, 15000);
      expect(login.user.phone).to.equal(phone);
      expect(r.stdout + r.stderr).to.not.include(PRODUCTION_ENV.WEBHOOK_JWT_KEY);
    } finally {
      await prod.stop();
    }
  });
});
