import http from 'node:http';
import { expect } from 'chai';
import { io as connect } from 'socket.io-client';
import { evolutionMessage } from '../helpers/gateway.js';
import { request } from '../helpers/http.js';
import { randomPhone } from '../helpers/flow.js';
import { startStack, stopProcess, type ServiceProcess, type Stack } from '../helpers/processes.js';
import { collectLogin, postChat, registerPin } from './support.js';

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
      this.timeout(30000);
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
      await new Promise<void>((resolve, reject) =>
        http.get(`${web.url}/health`, { agent }, (res) => res.resume().on('end', resolve)).on('error', reject),
      );
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
      this.timeout(30000);
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
      const counts = loginsByPin(stack.workers);
      expect([...counts.keys()].sort()).to.deep.equal(regs.map((r) => r.pinId).sort());
      expect([...counts.values()].every((c) => c === 1)).to.equal(true);
      expect(counts.size).to.equal(N);
      const b = stack.workers[1]!;
      expect(await stopProcess(b)).to.equal(0);
    });
  });
});

describe('ops: crash recovery', function () {
  let stack: Stack;
  let gateway: http.Server;
  const hits: { number: string; at: number }[] = [];
  let firstHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (firstHeld = resolve));

  before(async function () {
    this.timeout(30000);
    // a gateway that never answers its first request: the worker dies while waiting on it
    gateway = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        hits.push({ number: String((JSON.parse(body) as { number: string }).number), at: Date.now() });
        if (hits.length === 1) return firstHeld();
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ key: { id: `MOCK${hits.length}` }, status: 'PENDING' }));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    const port = (gateway.address() as { port: number }).port;
    stack = await startStack({
      name: 'ops-crash',
      webs: 1,
      workers: 0,
      env: {
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: `http://127.0.0.1:${port}`,
        EVOLUTION_API_KEY: 'test-key',
        EVOLUTION_INSTANCE: 'test',
        STALLED_INTERVAL_MS: '500',
      },
    });
    await stack.addWorker({ INSTANCE_NAME: 'worker-doomed' });
  });
  after(async function () {
    this.timeout(30000);
    await stack?.stop();
    gateway.closeAllConnections();
    gateway.close();
  });

  it('a worker killed with SIGKILL mid-job loses nothing: another worker takes over its stalled jobs', async function () {
    this.timeout(45000);
    const N = 10;
    const regs = await Promise.all(Array.from({ length: N }, () => registerPin(stack.url)));
    const phones = regs.map(() => randomPhone());
    await Promise.all(regs.map((r, i) => postChat(stack.url, `PIN: ${r.emoji}`, { phone: phones[i] })));
    await held; // the doomed worker is inside an outbound job, waiting on the gateway
    const doomed = stack.workers[0]!;
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await stack.addWorker({ INSTANCE_NAME: 'worker-heir' });

    const logins = await Promise.all(regs.map((r) => collectLogin(stack.url, r.pin, 20000)));
    expect(logins.every((l) => l.verified)).to.equal(true);
    // every login's reply reached the gateway; the one cut off was sent again by the heir
    const want = phones.map((p) => p.replace(/^\+/, '')).sort();
    const delivered = await (async () => {
      const deadline = Date.now() + 20000;
      while (Date.now() < deadline) {
        const got = [...new Set(hits.slice(1).map((h) => h.number))].sort();
        if (got.length === want.length) return got;
        await new Promise((r) => setTimeout(r, 100));
      }
      return [...new Set(hits.slice(1).map((h) => h.number))].sort();
    })();
    expect(delivered).to.deep.equal(want);
    expect(hits.slice(1).map((h) => h.number)).to.include(hits[0]!.number);
  });
});
