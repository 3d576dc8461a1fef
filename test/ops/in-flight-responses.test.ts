import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { InFlightResponses } from '../../src/http/in-flight.js';

/** InFlightResponses, on a real HTTP server: the responses open now, and only those. */
describe('ops: responses in flight (the drain tells them to close their connection)', function () {
  it('holds every open response, drops each as it closes, in any order', async function () {
    const inFlight = new InFlightResponses();
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => {
      inFlight.track(res);
      held.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true });
    const get = (): Promise<number> =>
      new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, agent }, (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0))).on('error', reject);
      });
    try {
      const answers = [get(), get(), get(), get()];
      while (held.length < 4) await new Promise((r) => setTimeout(r, 10));
      expect(inFlight.size).to.equal(4);

      // the second and the last first, then the first: each leaves, the others stay
      const open = (): http.ServerResponse[] => {
        const list: http.ServerResponse[] = [];
        inFlight.forEach((res) => {
          list.push(res);
        });
        return list;
      };
      for (const [n, i] of [
        [3, 1],
        [2, 3],
        [1, 0],
      ] as const) {
        held[i]!.end('done');
        await new Promise((r) => setTimeout(r, 50));
        expect(inFlight.size).to.equal(n);
        expect(open()).to.not.include(held[i]);
      }
      expect(open()).to.deep.equal([held[2]]);
      // what the drain does with them
      inFlight.forEach((res) => {
        res.setHeader('Connection', 'close');
      });
      held[2]!.end('done');
      expect(await Promise.all(answers)).to.deep.equal([200, 200, 200, 200]);
      await new Promise((r) => setTimeout(r, 50));
      expect(inFlight.size).to.equal(0);
    } finally {
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
