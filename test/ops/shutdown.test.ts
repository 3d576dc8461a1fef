import http from 'node:http';
import { expect } from 'chai';
import { io as connect } from 'socket.io-client';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually, request } from '../helpers/http.js';
import { randomPhone } from '../helpers/flow.js';
import { startStack, stopProcess, type ServiceProcess, type Stack } from '../helpers/processes.js';
import { collectLogin, evolutionEnv, postChat, registerPin, startHoldingGateway, type HoldingGateway } from './support.js';

/** Counts the worker's `login` lines per pinId across processes (readable development format). */
function loginsByPin(workers: ServiceProcess[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of workers) {
    for (const m of w.output().matchAll(/ worker info: login \{"pinId":"([^"]+)"/g)) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  }
  return counts;
}

describe('ops: graceful shutdown of real processes', function () {
  describe('web node', function () {
    let stack: Stack;
    before(async function () {
      this.timeout(120000);
      stack = await startStack({ name: 'ops-web-drain', webs: 2, workers: 1 });
    });
    after(async function () {
      this.timeout(30000);
      await stack?.stop();
    });

    it('on SIGTERM refuses new connections, finishes the request in flight, closes sockets, exits 0', async function () {
      this.timeout(30000);
      const [web, other] = stack.webs as [ServiceProcess, ServiceProcess];
      const { pin, emoji } = await registerPin(web.url);
      const socket = connect(web.url, { transports: ['websocket'], forceNew: true, reconnection: false });
      await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
      const disconnected = new Promise<string>((resolve) => socket.on('disconnect', (reason) => resolve(reason)));

      // a webhook whose body is still arriving when the signal comes (on a connection already in use)
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      await new Promise<void>((resolve, reject) => http.get(`${web.url}/health`, { agent }, (res) => res.resume().on('end', resolve)).on('error', reject));
      const raw = Buffer.from(JSON.stringify(evolutionMessage({ text: `PIN: ${emoji}`, phone: randomPhone() })));
      const response = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
        const req = http.request(
          `${web.url}/messaging-endpoint`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': raw.length } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
          },
        );
        req.on('error', reject);
        req.write(raw.subarray(0, 20));
        setTimeout(() => {
          web.child.kill('SIGTERM');
          // the rest of the body arrives after the node has begun draining and dropped its sockets
          void Promise.all([web.waitForOutput(/shutting down/), disconnected]).then(() => req.end(raw.subarray(20)), reject);
        }, 300);
      });

      const res = await response;
      expect(res.status, res.body).to.equal(200);
      expect(JSON.parse(res.body)).to.include({ received: true, accepted: 1 });
      expect(res.connection).to.equal('close');
      expect(await disconnected).to.equal('transport close'); // a reason on which clients reconnect
      const fresh = await request(web.url, 'GET', '/health').then(
        (r) => r.status,
        () => 'refused',
      );
      expect(fresh).to.equal('refused');
      expect(await web.exited).to.equal(0);
      agent.destroy();
      // the webhook accepted while draining was not lost: the other node hands out the login
      expect((await collectLogin(other.url, pin)).verified).to.equal(true);
    });
  });

  describe('workers under load', function () {
    let stack: Stack;
    before(async function () {
      this.timeout(120000);
      stack = await startStack({ name: 'ops-worker-drain', webs: 1, workers: 0 });
      await Promise.all([stack.addWorker({ INSTANCE_NAME: 'worker-a' }), stack.addWorker({ INSTANCE_NAME: 'worker-b' })]);
    });
    after(async function () {
      this.timeout(30000);
      await stack?.stop();
    });

    it('SIGTERM to one worker while webhooks flow: it exits 0 and every accepted webhook logs in exactly once', async function () {
      this.timeout(60000);
      const N = 60;
      const regs = await Promise.all(Array.from({ length: N }, () => registerPin(stack.url)));
      const [a] = stack.workers as [ServiceProcess, ServiceProcess];
      let sent = 0;
      const sendAll = async (): Promise<void> => {
        while (sent < N) {
          const reg = regs[sent++]!;
          const r = await postChat(stack.url, `PIN: ${reg.emoji}`);
          expect(r.status, r.text).to.equal(200);
          if (sent === Math.floor(N / 3)) a.child.kill('SIGTERM');
        }
      };
      await Promise.all([sendAll(), sendAll(), sendAll(), sendAll()]);
      expect(await a.exited).to.equal(0);
      expect(a.output()).to.match(/workers stopped/);
      expect(a.output()).not.to.match(/did not finish in time/);

      const logins = await Promise.all(regs.map((r) => collectLogin(stack.url, r.pin, 20000)));
      expect(logins.every((l) => l.verified)).to.equal(true);
      // a worker logs a login just after storing it, so a client can collect it before the line
      // reaches us through the pipe: read the logs until every login is there (or time is up)
      const counts = await eventually(async () => {
        const c = loginsByPin(stack.workers);
        return c.size === N ? c : undefined;
      }, 10000).catch(() => loginsByPin(stack.workers));
      expect([...counts.keys()].sort()).to.deep.equal(regs.map((r) => r.pinId).sort());
      expect([...counts.values()].every((c) => c === 1)).to.equal(true);
      expect(counts.size).to.equal(N);
      const b = stack.workers[1]!;
      expect(await stopProcess(b)).to.equal(0);
    });
  });
});

describe('ops: a worker stopping in the middle of a job', function () {
  let stack: Stack;
  let gateway: HoldingGateway;
  before(async function () {
    this.timeout(120000);
    gateway = await startHoldingGateway();
    stack = await startStack({ name: 'ops-midjob', webs: 1, workers: 0, env: { ...evolutionEnv(gateway.url), STALLED_INTERVAL_MS: '500' } });
  });
  afterEach(async function () {
    this.timeout(30000);
    // each test starts with no worker running
    await Promise.all(stack.workers.map((w) => stopProcess(w)));
    stack.workers.length = 0;
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
    await gateway?.close();
  });

  /** Logs in 10 people through a new worker whose first gateway call (a chat reply) hangs. */
  async function loginsWithHeldReply(env: Record<string, string>, holdMs: number | null) {
    gateway.arm(holdMs);
    const first = await stack.addWorker({ INSTANCE_NAME: 'worker-first', ...env });
    const regs = await Promise.all(Array.from({ length: 10 }, () => registerPin(stack.url)));
    const phones = regs.map(() => randomPhone());
    await Promise.all(regs.map((r, i) => postChat(stack.url, `PIN: ${r.emoji}`, { phone: phones[i] })));
    await gateway.firstArrived(); // the worker is inside an outbound job, waiting on the gateway
    return { first, regs, want: phones.map((p) => p.replace(/^\+/, '')).sort() };
  }

  async function everyReplyDelivered(want: string[]): Promise<string[]> {
    return eventually(
      async () => {
        const got = [...new Set(gateway.hits)].sort();
        return got.length === want.length ? got : undefined;
      },
      20000,
      100,
    );
  }

  it('SIGINT (handled as SIGTERM): the worker finishes the job it is in (the gateway sees it once), then exits 0', async function () {
    this.timeout(45000);
    const { first, regs, want } = await loginsWithHeldReply({}, 1500);
    first.child.kill('SIGINT');
    expect(await first.exited).to.equal(0);
    expect(first.output()).not.to.match(/did not finish in time/);
    await stack.addWorker({ INSTANCE_NAME: 'worker-next' }); // for whatever was still waiting
    const logins = await Promise.all(regs.map((r) => collectLogin(stack.url, r.pin, 20000)));
    expect(logins.every((l) => l.verified)).to.equal(true);
    expect(await everyReplyDelivered(want)).to.deep.equal(want);
    expect(gateway.hits.length).to.equal(want.length); // nothing sent twice
  });

  /** The held job's worker is gone without finishing it: a new worker must take it over. */
  async function heirTakesOver(regs: { pin: string }[], want: string[]): Promise<void> {
    await stack.addWorker({ INSTANCE_NAME: 'worker-heir' });
    const logins = await Promise.all(regs.map((r) => collectLogin(stack.url, r.pin, 20000)));
    expect(logins.every((l) => l.verified)).to.equal(true);
    // every login's reply reached the gateway; the one cut off was sent again by the heir
    expect(await everyReplyDelivered(want)).to.deep.equal(want);
    const resent = await eventually(async () => (gateway.hits.filter((n) => n === gateway.hits[0]).length === 2 ? true : undefined), 20000, 100);
    expect(resent).to.equal(true);
  }

  it('SIGTERM with a job that outlasts SHUTDOWN_TIMEOUT_MS: exits 0 in time, the job is taken over', async function () {
    this.timeout(45000);
    const { first, regs, want } = await loginsWithHeldReply({ SHUTDOWN_TIMEOUT_MS: '1000' }, null);
    first.child.kill('SIGTERM');
    expect(await first.exited, first.output()).to.equal(0);
    expect(first.output()).to.match(/did not finish in time/);
    await heirTakesOver(regs, want);
  });

  it('SIGKILL: nothing is lost, another worker takes over the stalled job', async function () {
    this.timeout(45000);
    const { first, regs, want } = await loginsWithHeldReply({}, null);
    first.child.kill('SIGKILL');
    await first.exited;
    await heirTakesOver(regs, want);
  });
});
