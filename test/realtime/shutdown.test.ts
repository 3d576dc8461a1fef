import { expect } from 'chai';
import { randomEmoji, randomPin, sendChat } from '../helpers/flow.js';
import { stopProcess } from '../helpers/processes.js';
import { startBalancer, type Balancer } from './balancer.js';
import { connected, type TestClient } from './clients.js';
import { useStack } from './stack.js';

describe('realtime: a web node shutting down', function () {
  const stack = useStack({ name: 'rt-shutdown', webs: 2 });
  let balancer: Balancer | undefined;
  let c: TestClient | undefined;
  after(async () => {
    c?.close();
    await balancer?.close();
  });

  it('closes its sockets cleanly; the client reconnects to another node, re-joins and gets its login', async function () {
    // node 0 first in the balancer's list: the client lands there, and on node 1 once 0 is gone
    const [first, second] = stack().webs;
    balancer = await startBalancer([first!.port, second!.port]);
    c = await connected(balancer.url, { reconnection: true, reconnectionDelay: 100, reconnectionDelayMax: 500 });
    const pin = randomPin();
    const emoji = randomEmoji();
    const payload = { pin, emojiString: emoji };
    // what a client does: (re-)register on every connect
    const rejoined: Array<{ pinId: string }> = [];
    c.socket.on('connect', () => c!.socket.emit('register-pin', payload, (a: { pinId: string }) => rejoined.push(a)));
    const reg = (await c.socket.timeout(10000).emitWithAck('register-pin', payload)) as { pinId: string };
    await c.next('pin-registered');

    const reason = new Promise<string>((resolve) => c!.socket.once('disconnect', (r) => resolve(r)));
    const reconnected = new Promise<void>((resolve) => c!.socket.io.once('reconnect', () => resolve()));
    const code = await stopProcess(first!, 'SIGTERM', 15000);
    expect(code, first!.output().slice(-2000)).to.equal(0);
    expect(first!.output()).to.match(/sockets closed/);
    // a transport close, not a server-side disconnect (after which a client would stay away)
    expect(await reason).to.equal('transport close');
    await reconnected;
    const again = await c.next<{ pinId: string }>('pin-registered');
    expect(again.pinId).to.equal(reg.pinId);

    await sendChat(second!.url, `PIN: ${emoji}`);
    const auth = await c.next<{ token: string }>('auth-success');
    expect(auth.token).to.be.a('string');
    expect(rejoined.map((r) => r.pinId)).to.deep.equal([reg.pinId]);
  });
});
