import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { fullLogin, randomEmoji, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { eventually, get, post, request, type JsonResponse } from '../helpers/http.js';
import { freePort } from '../helpers/processes.js';
import { rawStackLines, startFaultStack, type FaultStack } from './support.js';

/**
 * Redis refusing or not answering is answered as a fault of Redis: 503 NETWORK_ERROR with
 * Retry-After, never 500, one warn line rather than a stack trace per request; /health says
 * `degraded` or `unavailable` with the reason. Each fault is made on a private redis-server.
 */
describe('faults: Redis full, read-only, slow or gone → 503, never 500', function () {
  this.timeout(60000);
  let f: FaultStack;
  let admin: Redis;
  let login: LoginBody;
  const tally = { requests: 0, status503: 0, status500: 0 };

  before(async function () {
    f = await startFaultStack('faults-redis', {}, ['--enable-debug-command', 'yes']);
    admin = f.redis.client();
    login = (await fullLogin(f.stack.url)).login;
  });
  after(async function () {
    admin?.disconnect();
    await f?.stop();
    // eslint-disable-next-line no-console
    console.log(`      fault requests: ${tally.requests}, 503: ${tally.status503}, 500: ${tally.status500}`);
  });

  const expect503 = (r: JsonResponse, what: string): void => {
    tally.requests++;
    if (r.status === 503) tally.status503++;
    if (r.status === 500) tally.status500++;
    expect(r.status, `${what}: ${r.text}`).to.equal(503);
    expect(r.body, what).to.include({ success: false, error: 'NETWORK_ERROR' });
    expect(r.headers.get('retry-after'), what).to.match(/^[1-9]\d*$/);
    expect(r.text, what).not.to.match(/\bat \S+ \(|Error:|EXECABORT|OOM|READONLY/);
  };

  /** Every client write, once each. */
  const writes = async (): Promise<Array<[string, JsonResponse]>> => [
    ['register-pin', await post(f.stack.url, '/register-pin', { pin: randomPin(), emojiString: randomEmoji() })],
    ['check-login', await post(f.stack.url, '/check-login', { pin: randomPin() })],
    ['webhook', await sendChat(f.stack.url, `PIN: ${randomEmoji()}`)],
    ['send-message', await post(f.stack.url, '/send-message', { phoneNumber: '+5511912345678', message: 'hi' }, login.token)],
    ['refresh-token', await post(f.stack.url, '/refresh-token', { id: login.user.id }, login.token)],
  ];

  const healthy = () => eventually(async () => ((await get(f.stack.url, '/health')).status === 200 ? true : undefined), 15000, 100);

  it('out of memory (noeviction): writes 503 with Retry-After, /health degraded "out-of-memory"', async function () {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    try {
      for (const [what, r] of await writes()) {
        // refresh-token: the access token's session is read first; a read still works
        if (what === 'refresh-token' && r.status === 200) continue;
        expect503(r, what);
      }
      const health = await get(f.stack.url, '/health');
      expect(health.status).to.equal(503);
      expect(health.body).to.include({ status: 'degraded', reason: 'out-of-memory' });
      expect(health.body.activePins).to.be.a('number');
      expect(health.body).to.have.keys('status', 'timestamp', 'activePins', 'instance', 'reason');
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    await healthy();
  });

  it('a read-only replica: writes 503, /health degraded "read-only"', async function () {
    // a replica of a master that is not there: reads answer, writes are READONLY
    await admin.replicaof('127.0.0.1', await freePort());
    try {
      for (const [what, r] of await writes()) expect503(r, what);
      const health = await get(f.stack.url, '/health');
      expect(health.body).to.include({ status: 'degraded', reason: 'read-only' });
    } finally {
      await admin.replicaof('NO', 'ONE');
    }
    await healthy();
    // the data was kept: the session still works
    expect((await get(f.stack.url, '/profile', login.token)).status).to.equal(200);
  });

  it('DEBUG SLEEP (Redis stalls 6 s): requests meanwhile get 503, then all is well', async function () {
    // long enough that a loaded machine still gets every request to the web node while Redis sleeps
    const sleeping = admin.call('DEBUG', 'SLEEP', '6');
    await new Promise((r) => setTimeout(r, 100));
    const [health, ...answers] = await Promise.all([
      get(f.stack.url, '/health'),
      ...Array.from({ length: 10 }, () => post(f.stack.url, '/register-pin', { pin: randomPin(), emojiString: randomEmoji() })),
      request(f.stack.url, 'GET', '/profile', { token: login.token }),
    ]);
    for (const r of answers) expect503(r, 'while Redis sleeps');
    expect(health!.status).to.equal(503);
    expect(health!.body).to.include({ status: 'unavailable', reason: 'timeout' });
    await sleeping;
    await healthy();
  });

  it('DEBUG SLEEP while 60 clients collect their logins: 503s, then every retry gets its own tokens, none lost', async function () {
    const clients = await Promise.all(
      Array.from({ length: 60 }, async () => {
        const pin = randomPin();
        const emoji = randomEmoji();
        const reg = await post(f.stack.url, '/register-pin', { pin, emojiString: emoji });
        expect(reg.status, reg.text).to.equal(200);
        expect((await sendChat(f.stack.url, `PIN: ${emoji}`)).status).to.equal(200);
        return { pin, pinId: String(reg.body.pinId) };
      }),
    );
    // every login is made and waits to be collected
    const worker = f.stack.workers[0]!;
    await eventually(async () => (clients.every((c) => worker.output().includes(c.pinId)) ? true : undefined), 20000, 100);
    const sleeping = admin.call('DEBUG', 'SLEEP', '3');
    await new Promise((r) => setTimeout(r, 50));
    const first = await Promise.all(clients.map((c) => post(f.stack.url, '/check-login', { pin: c.pin })));
    await sleeping;
    const firstStatus = first.map((r) => r.status);
    for (const r of first) if (r.status !== 200) expect503(r, 'collecting while Redis sleeps');
    // each client retries until it has its tokens
    const collected = await Promise.all(
      clients.map((c, i) =>
        first[i]!.status === 200 && first[i]!.body.verified === true
          ? Promise.resolve(first[i]!.body as unknown as LoginBody)
          : eventually(
              async () => {
                const r = await post<LoginBody>(f.stack.url, '/check-login', { pin: c.pin });
                expect(r.status, r.text).to.equal(200);
                return r.body.verified ? r.body : undefined;
              },
              15000,
              200,
            ),
      ),
    );
    const lost = collected.filter((l) => !l.verified).length;
    const live = await Promise.all(collected.map(async (l) => (await get(f.stack.url, '/profile', l.token)).status));
    const distinct = new Set(collected.map((l) => l.token)).size;
    // eslint-disable-next-line no-console
    console.log(
      `      60 collections under DEBUG SLEEP 3: first answers 503 ${firstStatus.filter((s) => s === 503).length}, ` +
        `200 ${firstStatus.filter((s) => s === 200).length}; collected after retries ${collected.length - lost}, lost ${lost}, ` +
        `sessions live ${live.filter((s) => s === 200).length}, distinct tokens ${distinct}`,
    );
    expect(firstStatus.filter((s) => s === 503).length, 'the sleep was felt').to.be.greaterThan(0);
    expect(lost).to.equal(0);
    expect(live.every((s) => s === 200)).to.equal(true);
    expect(distinct).to.equal(60);
  });

  it('black-holed or reset connections: 503 within the command timeout, then recovery', async function () {
    f.proxy.blackHole();
    try {
      const started = Date.now();
      expect503(await post(f.stack.url, '/register-pin', { pin: randomPin(), emojiString: randomEmoji() }), 'black hole');
      expect(Date.now() - started).to.be.below(5000);
      const health = await get(f.stack.url, '/health');
      expect(health.body).to.include({ status: 'unavailable' });
      expect(health.body.reason).to.be.a('string');
    } finally {
      f.proxy.pass();
    }
    f.proxy.dropConnections();
    await healthy();
    const again = await fullLogin(f.stack.url);
    expect(again.login.verified).to.equal(true);
  });

  it('no process printed a stack trace for any of it', async function () {
    for (const p of [...f.stack.webs, ...f.stack.workers]) {
      const raw = rawStackLines(p.output());
      expect(raw, `${p.role} printed:\n${raw.slice(0, 5).join('\n')}`).to.deep.equal([]);
      expect(p.output()).not.to.match(/request failed/);
    }
  });
});
