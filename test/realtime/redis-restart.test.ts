import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomEmoji, randomPin, sendChat } from '../helpers/flow.js';
import { eventually } from '../helpers/http.js';
import { freePort } from '../helpers/processes.js';
import { connected, type TestClient } from './clients.js';
import { useStack } from './stack.js';

/** A private Redis that this suite may stop (the shared one is never touched). */
async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited; // reaped, not left a zombie
}

function redisServer(port: number): ChildProcess {
  return spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

describe('realtime: RESP3 pub/sub through a Redis restart', function () {
  let port = 0;
  let redis: ChildProcess | undefined;
  let c: TestClient | undefined;
  before(async function () {
    port = await freePort();
    redis = redisServer(port);
    await eventually(async () => {
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } finally {
        probe.disconnect();
      }
    });
  });
  const stack = useStack({ name: 'rt-restart', webs: 2, env: { get REDIS_URL() { return `redis://127.0.0.1:${port}`; } } });
  after(async () => {
    c?.close();
    await kill(redis);
  });

  it('speaks RESP3 on the adapter connections, and events flow again after Redis comes back', async function () {
    this.timeout(40000);
    const admin = new Redis(port, '127.0.0.1');
    // two per web node, named once their handshake is done
    const adapterLines = await eventually(async () => {
      const lines = String(await admin.client('LIST')).split('\n').filter((l) => /name=pinauth:io-(pub|sub):/.test(l));
      return lines.length === 4 ? lines : undefined;
    });
    admin.disconnect();
    for (const line of adapterLines) expect(line).to.match(/ resp=3( |$)/);

    c = await connected(stack().webs[0]!.url);
    await kill(redis);
    const down = (await c.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as { error?: string };
    expect(down.error).to.equal('NETWORK_ERROR');
    expect(await c.next('pin-error')).to.include({ error: 'NETWORK_ERROR' });

    redis = redisServer(port);
    const pin = randomPin();
    const emoji = randomEmoji();
    await eventually(async () => {
      const r = (await c!.socket.timeout(5000).emitWithAck('register-pin', { pin, emojiString: emoji })) as { success: boolean };
      return r.success ? true : undefined;
    }, 15000, 300);
    await eventually(async () => {
      const res = await sendChat(stack().webs[1]!.url, `PIN: ${emoji}`);
      return res.status === 200 ? true : undefined;
    }, 15000, 300);
    const auth = await c.next<{ token: string }>('auth-success', 15000);
    expect(auth.token).to.be.a('string');
  });
});
