import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { randomEmoji, randomPhone, randomPin, sendChat, type LoginBody } from '../helpers/flow.js';
import { get, post } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { SentinelTopology } from '../helpers/redis-topology.js';
import { keys as keySchema } from '../../src/redis/keys.js';
import { connected, type TestClient } from '../realtime/clients.js';

/** Retries `fn` until it returns a value, counting the statuses it saw on the way. */
async function untilDone<T>(fn: () => Promise<T | undefined>, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`not done in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function scanKeys(topo: SentinelTopology, pattern: string): Promise<string[]> {
  const c = (await topo.primary()).client();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return keys;
  } finally {
    c.disconnect();
  }
}

/** The session key an access token names (`sub`, `sid`). */
function sessionKey(prefix: string, token: string): string {
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string; sid: string };
  return keySchema(prefix).session(claims.sub, claims.sid);
}

/**
 * Through Redis Sentinel (a primary, two replicas, three sentinels), the primary is killed in the
 * middle of a burst of webhooks. Requests during the switch get 503 and succeed when retried,
 * as a gateway retries; every accepted webhook still ends in exactly one login; a socket that
 * registered before the failover gets its auth-success after it, without reconnecting.
 */
describe('redis: Sentinel failover', function () {
  this.timeout(180000);
  let topo: SentinelTopology | undefined;
  let stack: Stack | undefined;
  let socket: TestClient | undefined;
  /** the first test's login, made before the failover */
  let first: LoginBody | undefined;

  before(async function () {
    // two replicas: after the failover the new primary still has one to WAIT for
    topo = await SentinelTopology.start({ replicas: 2, downAfterMs: 1000 });
    stack = await startStack({
      name: 'sentinel',
      webs: 2,
      workers: 2,
      env: { ...topo.env(), REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '1000', STALLED_INTERVAL_MS: '1000', CHAT_REPLIES: 'false' },
    });
  });
  after(async function () {
    socket?.close();
    await stack?.stop();
    await topo?.stop();
  });

  it('logs in through the sentinels, every connection on the primary', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack!.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    expect((await sendChat(stack!.webs[1]!.url, `PIN: ${emoji}`)).status).to.equal(200);
    const login = await untilDone(async () => {
      const r = await post<LoginBody>(stack!.url, '/check-login', { pin });
      return r.status === 200 && r.body.verified ? r.body : undefined;
    }, 15000);
    expect((await get(stack!.url, '/profile', login.token)).status).to.equal(200);
    first = login;
    // commands, queues, workers, adapter pub/sub of 2 webs + 2 workers: all on the primary
    const names = String(await (await topo!.primary()).ask('CLIENT', 'LIST'))
      .split('\n')
      .map((l) => /name=(\S*)/.exec(l)?.[1] ?? '')
      .filter((n) => n.startsWith('pinauth:'));
    for (const kind of ['web', 'worker', 'io-pub', 'io-sub', 'web-wait', 'worker-wait']) {
      expect(
        names.some((n) => n.startsWith(`pinauth:${kind}:`)),
        `${kind} in ${names.join(' ')}`,
      ).to.equal(true);
    }
  });

  it('kills the primary mid-burst: 503 during the switch, every accepted webhook one login, sockets keep receiving', async function () {
    const web = stack!.webs.map((w) => w.url);
    const N = 80;
    const logins = Array.from({ length: N }, () => ({ pin: randomPin(), emoji: randomEmoji(8), phone: randomPhone(), id: randomBytes(10).toString('hex') }));
    for (const l of logins) expect((await post(web[0]!, '/register-pin', { pin: l.pin, emojiString: l.emoji })).status).to.equal(200);
    socket = await connected(web[1]!);
    const sPin = randomPin();
    const sEmoji = randomEmoji(8);
    socket.socket.emit('register-pin', { pin: sPin, emojiString: sEmoji });
    await socket.next('pin-registered');
    // registrations are not waited for by the service (only webhooks and logins are): make sure
    // the replica has them, so the test is about the webhooks
    expect(await (await topo!.primary()).replicated(2, 5000)).to.equal(2);

    const statuses = new Map<number, number>();
    let accepted = 0;
    let lastFailure = '';
    let killed: Promise<number> | null = null;
    const deliver = async (l: (typeof logins)[number], i: number): Promise<void> => {
      await new Promise((r) => setTimeout(r, i * 25));
      // as a gateway does: the same message (same id) again until it is answered 200
      await untilDone(
        async () => {
          const r = await sendChat(web[i % 2]!, `PIN: ${l.emoji}`, { phone: l.phone, id: l.id }).catch((e: unknown) => ({ status: 0, text: String(e) }));
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status !== 200) lastFailure = `${r.status} ${r.text}`;
          return r.status === 200 ? true : undefined;
        },
        90000,
        200,
      );
      accepted++;
      if (accepted === Math.floor(N / 3)) killed = topo!.killPrimary();
    };
    const sent = Promise.all(logins.map(deliver));
    const oldPort = await untilDone(async () => (killed ? await killed : undefined), 60000, 10);
    const newPort = await topo!.waitForFailover(oldPort);
    await sent.catch((err: unknown) => {
      throw new Error(
        `${String(err)}; accepted ${accepted}; statuses ${JSON.stringify([...statuses])}; last ${lastFailure}\n${stack!.webs[0]!.output().slice(-3000)}`,
      );
    });
    expect(newPort).to.not.equal(oldPort);
    expect(accepted).to.equal(N);
    // the switch was seen (503, or a connection refused by a web node) and nothing else went wrong
    const failures = [...statuses].filter(([s]) => s !== 200);
    expect(failures.length, JSON.stringify([...statuses])).to.be.greaterThan(0);
    for (const [status] of failures) expect([503, 0], JSON.stringify([...statuses])).to.include(status);

    // every webhook is one login, collected exactly once, with a session that works
    const tokens = await Promise.all(
      logins.map(async (l) => {
        const body = await untilDone(
          async () => {
            const r = await post<LoginBody>(web[0]!, '/check-login', { pin: l.pin });
            return r.status === 200 && r.body.verified ? r.body : undefined;
          },
          90000,
          250,
        );
        expect(body.user.phone).to.equal(l.phone);
        return body.token;
      }),
    );
    for (const [i, l] of logins.entries()) {
      const r = await post(web[1]!, '/check-login', { pin: l.pin });
      // collected once: a later check gets the same login (collect retry window) or nothing, never another
      if (r.status === 200) expect(r.body.token, 'the same login again').to.equal(tokens[i]);
      else expect(r.status, `${r.text}\n${stack!.webs[1]!.output().slice(-2000)}`).to.equal(404);
    }
    for (const token of tokens) {
      const r = await get(web[0]!, '/profile', token);
      expect(r.status, `${r.text}\n${stack!.webs[0]!.output().slice(-2000)}`).to.equal(200);
    }
    const prefix = stack!.prefix;
    // one user per phone and one session per login: 1 from the first test, N here
    const expected = [first!.token, ...tokens].map((t) => sessionKey(prefix, t));
    const found = await scanKeys(topo!, `${prefix}:sess:*`);
    const missing = expected.filter((k) => !found.includes(k));
    const extra = found.filter((k) => !expected.includes(k));
    expect({ missing, extra }, `first test's session ${expected[0]}; failover ${oldPort} → ${newPort}`).to.deep.equal({ missing: [], extra: [] });
    expect(await scanKeys(topo!, `${prefix}:phone:*`)).to.have.length(N + 1);

    // the socket registered before the failover, on the same connection, hears its login after it
    expect((await untilDone(async () => ((await sendChat(web[0]!, `PIN: ${sEmoji}`)).status === 200 ? true : undefined), 30000)) === true);
    const auth = await socket.next<{ token: string; user: { id: string } }>('auth-success', 20000);
    expect(auth.token).to.be.a('string');
    expect(socket.socket.connected).to.equal(true);
    console.log(`      failover ${oldPort} → ${newPort}; webhook answers: ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
