import { expect } from 'chai';
import { randomEmoji, randomPin, sendChat } from '../../helpers/flow.js';
import { stopProcess } from '../../helpers/processes.js';
import { startBalancer, type Balancer } from '../balancer.js';
import { connected, type TestClient } from '../clients.js';
import type { Stack } from '../../helpers/processes.js';

/** A node leaving: an extra web node is added to the stack, then shut down. */
export function shutdown(stack: () => Stack): void {
  describe('a web node shutting down', function () {
    let balancer: Balancer | undefined;
    let c: TestClient | undefined;
    after(async () => {
      c?.close();
      await balancer?.close();
    });

    it('closes its sockets cleanly; the client reconnects to another node, re-joins and gets its login', async function () {
      // a node of its own, first in the balancer's list: the client lands there, and on node 0 once it is gone
      const leaving = await stack().addWeb();
      const staying = stack().webs[0];
      balancer = await startBalancer([leaving.port, staying!.port]);
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
      const code = await stopProcess(leaving, 'SIGTERM', 15000);
      expect(code, leaving.output().slice(-2000)).to.equal(0);
      expect(leaving.output()).to.match(/sockets closed/);
      // a transport close, not a server-side disconnect (after which a client would stay away)
      expect(await reason).to.equal('transport close');
      await reconnected;
      const again = await c.next<{ pinId: string }>('pin-registered');
      expect(again.pinId).to.equal(reg.pinId);

      await sendChat(staying!.url, `PIN: ${emoji}`);
      const auth = await c.next<{ token: string }>('auth-success');
      expect(auth.token).to.be.a('string');
      expect(rejoined.map((r) => r.pinId)).to.deep.equal([reg.pinId]);
    });
  });
}
