import { expect } from 'chai';
import { runNode } from '../helpers/processes.js';
import { REDIS_URL, testRedis } from '../helpers/redis.js';

/**
 * `npm run bench:webhook-parts` on a few repetitions: every part and every intake batch size
 * printed with a figure, the intake's messages really written (the script answers how many) and
 * its keys gone afterwards. The figures at this size are not the point; the test keeps the tool
 * from rotting.
 */
describe("the webhook's parts, each measured alone (bench:webhook-parts)", function () {
  this.timeout(120_000);

  it('prints a CPU figure for each part and for the intake write at each batch size, and leaves no key behind', async function () {
    const { code, stdout, stderr } = await runNode(['dist/scripts/bench/webhook-parts.js', '2000'], { REDIS_URL });
    expect(code, stderr.slice(-3000)).to.equal(0);
    const figure = (part: string): string => {
      const row = stdout.split('\n').find((line) => line.startsWith(`${part}  `));
      expect(row, `${part} row in:\n${stdout}`).to.be.a('string');
      return row!.slice(part.length).trim();
    };
    for (const part of ['HMAC-SHA256 check of the body', 'body to text and JSON.parse (bare Koa does it too)', 'normalising the event', "the intake entry's JSON", 'the request metric (histogram)', 'a request id']) {
      // a part is microseconds: above nothing, far below a millisecond
      expect(Number(figure(part)), part).to.be.within(0.001, 1000);
    }
    for (const batch of [1, 3, 6, 12, 32]) {
      const m = /^(\d+\.\d\d) \((\d+\.\d\d)\)$/.exec(figure(`intake write, ${batch} a batch (per message; system time)`));
      expect(m, `intake ${batch}`).to.not.equal(null);
      expect(Number(m![1])).to.be.within(0.01, 10_000);
      expect(Number(m![2])).to.be.at.most(Number(m![1]));
    }
    const redis = testRedis();
    try {
      expect(await redis.keys('bench-parts-*')).to.deep.equal([]);
    } finally {
      redis.disconnect();
    }
  });
});
