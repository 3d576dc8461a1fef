import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { sign } from '../messaging/support.js';

const HMAC_SECRET = 'shares-hmac-secret-0123456789abcdef0123';
const MIB = 1024 * 1024;
const FAKE_SIGNATURE = `sha256=${'0'.repeat(64)}`;
const FILLER = Buffer.alloc(MIB, 0x20);
const CAP = 300;

/** A webhook from `localAddress` (its network), signed (or with a signature that can't match); the status it got. */
function signedWebhook(port: number, localAddress: string, signature?: string): Promise<number> {
  const raw = Buffer.from(JSON.stringify(evolutionMessage({ text: 'PIN: 🍎🚀🐱🌵' })));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method: 'POST',
        path: '/messaging-endpoint',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': raw.length, 'x-hub-signature-256': signature ?? sign(raw, HMAC_SECRET) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(raw);
  });
}

/**
 * A signed body that stalls: its head (a signature that can never match), then all but a byte
 * of its ~1 MiB, then nothing. Resolves with the status if one comes, null while it is held.
 */
function stalledBody(port: number, localAddress: string): { socket: net.Socket; answered: Promise<number | null> } {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  const answered = new Promise<number | null>((resolve) => {
    let got = '';
    socket.on('data', (b: Buffer) => {
      got += b.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) resolve(Number(m[1]));
    });
    socket.on('close', () => resolve(null));
    socket.on('error', () => undefined);
  });
  socket.on('connect', () => {
    socket.write(
      `POST /messaging-endpoint HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-hub-signature-256: ${FAKE_SIGNATURE}\r\ncontent-length: ${MIB - 1}\r\n\r\n`,
    );
    socket.write(FILLER.subarray(0, MIB - 2));
  });
  return { socket, answered };
}

/** Whether `p` settles within `ms`: its value, or 'held'. */
const within = <T>(p: Promise<T>, ms: number): Promise<T | 'held'> =>
  Promise.race([p, new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), ms))]);

/**
 * Round 4 (issue 48), budgets others could spend, each attack played against a production web
 * node: eight networks stalling signed ~1 MiB bodies while the gateway's network keeps sending
 * signed webhooks; 1,500 Socket.IO polling handshakes pipelined on one TCP connection.
 */
describe("security: shares strangers can't take (production settings)", function () {
  this.timeout(120_000);
  let stack: InProcessStack;
  let port: number;

  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'shares',
      webs: 1,
      workers: 0,
      env: {
        NODE_ENV: 'production',
        JWT_SECRET: randomBytes(32).toString('hex'),
        WEBHOOK_SECRET: HMAC_SECRET,
        WEBHOOK_IN_FLIGHT_PER_IP: '',
        WEBHOOK_UNVERIFIED_BYTES: '',
        REQUEST_TIMEOUT_MS: '',
        SOCKETS_PER_IP: String(CAP),
      },
    });
    port = stack.webs[0]!.port;
  });
  after(async function () {
    await stack?.stop();
  });

  it("eight networks stalling signed 1 MiB bodies fill the strangers' share; the gateway's signed webhooks are answered 200 throughout", async function () {
    // the gateway's network has delivered before (as it does every few seconds in production)
    const gateway = '127.0.0.2';
    expect(await signedWebhook(port, gateway)).to.equal(200);
    const held: ReturnType<typeof stalledBody>[] = [];
    try {
      // each network its full share (4 of the 32 MiB default): four bodies, eight networks
      for (let n = 0; n < 8; n++) for (let i = 0; i < 4; i++) held.push(stalledBody(port, `127.0.0.${10 + n}`));
      // the flood is in place once a ninth stranger's body of the gateway's size gets no room (429, not 401)
      await eventually(async () => ((await signedWebhook(port, '127.0.0.30', FAKE_SIGNATURE)) === 429 ? true : undefined), 20_000, 100);
      // while the stalled bodies are still held, the gateway's deliveries go through
      const answers = await Promise.all(Array.from({ length: 5 }, () => signedWebhook(port, gateway)));
      expect(answers).to.deep.equal([200, 200, 200, 200, 200]);
      // strangers together hold at most half the budget (16 MiB: 16 bodies); the rest were refused
      const now = await Promise.all(held.map((h) => within(h.answered, 10)));
      const kept = now.filter((s) => s === 'held').length;
      expect(kept, now.join(',')).to.be.within(1, 16);
      expect(now.filter((s) => s === 429).length).to.equal(held.length - kept);
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });

  it(`1,500 polling handshakes pipelined on one TCP connection open at most SOCKETS_PER_IP=${CAP} sessions`, async function () {
    const total = 1500;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
    let got = '';
    const statuses = await new Promise<number[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${(got.match(/HTTP\/1\.1 \d{3}/g) ?? []).length} answers`)), 60_000);
      socket.on('data', (b: Buffer) => {
        got += b.toString('latin1');
        const found = got.match(/HTTP\/1\.1 \d{3}/g) ?? [];
        if (found.length >= total) {
          clearTimeout(timer);
          resolve(found.map((s) => Number(s.slice(9))));
        }
      });
      socket.on('error', reject);
      socket.on('connect', () => socket.write('GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n'.repeat(total)));
    });
    socket.destroy();
    const opened = (got.match(/"sid":"/g) ?? []).length;
    // eslint-disable-next-line no-console
    console.log(`      ${opened} sessions opened, ${statuses.filter((s) => s === 403).length} refused 403`);
    expect(statuses.filter((s) => s === 200).length).to.equal(opened);
    expect(opened).to.be.at.most(CAP);
    expect(opened).to.be.at.least(1);
    expect(statuses.every((s) => s === 200 || s === 403)).to.equal(true);
  });
});
