import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomEmoji, randomPin, sendChat } from '../helpers/flow.js';
import { eventually } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { connected, type TestClient } from './clients.js';
import { useStack } from './stack.js';

describe('realtime: RESP3 pub/sub through a Redis restart', function () {
  let redis: PrivateRedis | undefined;
  let c: TestClient | undefined;
  before(async function () {
    redis = await PrivateRedis.start();
  });
  const stack = useStack({
    name: 'rt-restart',
    webs: 2,
    env: {
      get REDIS_URL() {
        return redis!.url;
      },
    },
  });
  after(async () => {
    c?.close();
    await redis?.kill();
  });

  it('speaks RESP3 on the adapter connections, and events flow again after Redis comes back', async function () {
    this.timeout(40000);
    const admin = new Redis(redis!.url);
    // two per web node, named once their handshake is done
    const adapterLines = await eventually(async () => {
      const lines = String(await admin.client('LIST'))
        .split('\n')
        .filter((l) => /name=pinauth:io-(pub|sub):/.test(l));
      return lines.length === 4 ? lines : undefined;
    });
    admin.disconnect();
    for (const line of adapterLines) expect(line).to.match(/ resp=3( |$)/);

    c = await connected(stack().webs[0]!.url);
    await redis!.kill();
    const down = (await c.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as { error?: string };
    expect(down.error).to.equal('NETWORK_ERROR');
    expect(await c.next('pin-error')).to.include({ error: 'NETWORK_ERROR' });

    await redis!.start();
    const pin = randomPin();
    const emoji = randomEmoji();
    await eventually(
      async () => {
        const r = (await c!.socket.timeout(5000).emitWithAck('register-pin', { pin, emojiString: emoji })) as { success: boolean };
        return r.success ? true : undefined;
      },
      15000,
      300,
    );
    await eventually(
      async () => {
        const res = await sendChat(stack().webs[1]!.url, `PIN: ${emoji}`);
        return res.status === 200 ? true : undefined;
      },
      15000,
      300,
    );
    const auth = await c.next<{ token: string }>('auth-success', 15000);
    expect(auth.token).to.be.a('string');
  });
});
