import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, sendChat } from '../../helpers/flow.js';
import { connected, inBatches, sleep, type TestClient } from '../clients.js';
import type { ServiceNode, Stack } from '../../helpers/processes.js';

/** four batches: each node holds many sockets at once while webhooks cross to another node (500 asserted nothing more) */
const CLIENTS = 200;
const BATCH = 50;

/** Many clients at once, spread over the stack's web nodes. */
export function manyClients(stack: () => Stack<ServiceNode>): void {
  describe(`${CLIENTS} concurrent clients`, function () {
    let clients: TestClient[] = [];
    after(() => {
      for (const c of clients) c.close();
    });

    it('gives each client exactly one auth-success, its own', async function () {
      this.timeout(90000);
      const webs = stack().webs;
      const people = Array.from({ length: CLIENTS }, (_, i) => ({
        node: i % webs.length,
        pin: randomPin(),
        emoji: randomEmoji(8),
        phone: randomPhone(),
      }));
      clients = await inBatches(people, BATCH, async (p) => {
        const c = await connected(webs[p.node]!.url);
        const ack = (await c.socket.timeout(20000).emitWithAck('register-pin', { pin: p.pin, emojiString: p.emoji })) as { success: boolean };
        expect(ack.success, JSON.stringify(ack)).to.equal(true);
        return c;
      });
      // each login's webhook goes to another node than its client's
      await inBatches(people, BATCH, async (p) => {
        const res = await sendChat(webs[(p.node + 1) % webs.length]!.url, `PIN: ${p.emoji}`, { phone: p.phone });
        expect(res.status, res.text).to.equal(200);
      });
      const got = await Promise.all(clients.map((c) => c.next<{ token: string; user: { phone: string } }>('auth-success', 60000)));
      await sleep(500); // room for a stray duplicate or misdelivery to show up
      got.forEach((auth, i) => {
        expect(auth.user.phone).to.equal(people[i]!.phone);
        expect(clients[i]!.of('auth-success')).to.have.length(1);
      });
      expect(new Set(got.map((a) => a.token)).size).to.equal(CLIENTS);
    });
  });
}
