import { expect } from 'chai';
import { io as connect } from 'socket.io-client';
import { post, request } from '../helpers/http.js';
import { randomPhone } from '../helpers/flow.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { collectLogin, dumpPrefix, postChat, registerPin } from './support.js';

const SECRET = 'privacy-suite-webhook-secret-of-32-bytes';

/** How a string could show up in a log: as is, JSON-escaped, or with \u escapes for non-ASCII. */
function forms(secret: string): string[] {
  const escaped = secret.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), escaped])];
}

describe('ops: logs and job data never hold a PIN, a token or message text', function () {
  let stack: Stack;
  before(async function () {
    this.timeout(120000);
    stack = await startStack({
      name: 'ops-privacy',
      env: {
        NODE_ENV: 'production',
        LOG_LEVEL: 'debug',
        JWT_SECRET: 'a-production-like-secret-of-enough-length-0123456789',
        WEBHOOK_SECRET: SECRET,
        // tokens stay in Redis for these retry windows after they are handed out (SECURITY.md)
        COLLECT_RETRY_SECONDS: '1',
        REFRESH_REUSE_SECONDS: '1',
      },
    });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
  });

  it('a full login at debug level: JSON lines with ids, none of the secrets; job data without them', async function () {
    this.timeout(30000);
    const { pin, emoji, pinId } = await registerPin(stack.url);
    // a socket registration of a second PIN, cancelled, and a chat code nobody holds
    const socket = connect(stack.url, { transports: ['websocket'], forceNew: true });
    const other = { pin: `sock-${Math.random().toString(36).slice(2, 14)}`, emojiString: '' };
    const ack = await new Promise<{ emojiString?: string }>((resolve) => socket.emit('register-pin', { pin: other.pin }, resolve));
    other.emojiString = String(ack.emojiString);
    expect(other.emojiString).to.have.length.above(0);
    socket.emit('cancel-auth', { pin: other.pin });
    const chat = `PIN: ${emoji}`;
    const phone = randomPhone();
    expect((await postChat(stack.url, chat, { phone, secret: SECRET })).status).to.equal(200);
    expect((await postChat(stack.url, 'PIN: 🐌🐌🐌', { secret: SECRET })).status).to.equal(200);
    expect((await postChat(stack.url, 'my own words 3b9f', { fromMe: true, secret: SECRET })).status).to.equal(200); // a debug line
    const login = await collectLogin(stack.url, pin);
    const refreshed = await post<{ token: string; refreshToken: string }>(stack.url, '/refresh-token', { refreshToken: login.refreshToken }, login.token);
    expect(refreshed.status, JSON.stringify(refreshed.body)).to.equal(200);
    const sendText = 'a private note 7d1e';
    const sent = await post(stack.url, '/send-message', { phoneNumber: phone, message: sendText }, refreshed.body.token);
    expect(sent.status).to.equal(200);
    expect((await request(stack.url, 'GET', '/profile', { token: refreshed.body.token })).status).to.equal(200);
    socket.close();

    // job data, and everything else in Redis once the retry windows are over: no PIN, no token
    await new Promise((r) => setTimeout(r, 1500));
    const stored = await dumpPrefix(stack.prefix);
    // the dump did read job data (the reply's, JSON within the job hash; no job holds a pinId)
    expect(stored).to.include(`\\"to\\":\\"${phone}\\"`);
    for (const secret of [pin, other.pin, login.token, login.refreshToken, refreshed.body.token, refreshed.body.refreshToken]) {
      expect(stored.includes(secret), `Redis holds ${secret.slice(0, 12)}…`).to.equal(false);
    }

    await stack.stop(); // flush and close every process before reading their output
    const output = [...stack.webs, ...stack.workers].map((p) => p.output()).join('\n');
    const lines = output.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length).to.be.greaterThan(10);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.to.throw();
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.some((r) => r.level === 'debug')).to.equal(true);
    const requests = records.filter((r) => r.message === 'request');
    expect(requests.length).to.be.greaterThan(4);
    for (const r of requests) expect(r.requestId, JSON.stringify(r)).to.be.a('string');
    expect(records.some((r) => r.message === 'pin registered' && r.pinId === pinId && typeof r.requestId === 'string')).to.equal(true);
    expect(records.some((r) => r.message === 'login' && r.pinId === pinId && r.userId === login.user.id)).to.equal(true);
    expect(records.some((r) => r.message === 'request' && r.path === '/profile' && r.userId === login.user.id)).to.equal(true);

    const secrets = [
      pin,
      other.pin,
      login.token,
      login.refreshToken,
      refreshed.body.token,
      refreshed.body.refreshToken,
      chat,
      emoji,
      other.emojiString,
      '🐌🐌🐌',
      'my own words 3b9f',
      sendText,
    ];
    const signatures = [login.token, login.refreshToken].map((t) => t.split('.')[2]!);
    for (const secret of [...secrets, ...signatures]) {
      for (const form of forms(secret)) expect(output.includes(form), `logs hold ${form.slice(0, 16)}…`).to.equal(false);
    }
  });
});
