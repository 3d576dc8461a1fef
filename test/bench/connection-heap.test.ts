import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { expect } from 'chai';
import { runNode } from '../helpers/processes.js';
import { REDIS_URL, testRedis } from '../helpers/redis.js';

/**
 * `npm run bench:connection-heap` on a few connections and no idle time: both totals and both
 * tables printed, the three socket objects every connection has (net's, engine.io's, Socket.IO's)
 * counted as three a connection, and the web node's keys gone afterwards. The tool keeps working;
 * the figures at this size are not the point.
 */
/** The keys left under a prefix. */
async function keysUnder(prefix: string): Promise<string[]> {
  const redis = testRedis();
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}

describe("an idle connection's heap, by kind (bench:connection-heap)", function () {
  this.timeout(180_000);

  it('prints the bytes a connection by kind and by holder, and leaves no key behind', async function () {
    const { code, stdout, stderr } = await runNode(['dist/scripts/bench/connection-heap.js', '60', '--idle=0'], { REDIS_URL });
    expect(code, stderr.slice(-3000)).to.equal(0);
    const value = (label: string): number => {
      const m = new RegExp(`^${label}  (\\d+)$`, 'm').exec(stdout);
      expect(m, `${label} in:\n${stdout}`).to.not.equal(null);
      return Number(m![1]);
    };
    const total = value('bytes a connection');
    const own = value('without what was made once');
    expect(total).to.be.within(1_000, 200_000);
    expect(own).to.be.within(1_000, total);
    const socketRow = stdout.split('\n').find((line) => /^object Socket\s/.test(line));
    expect(socketRow, stdout).to.be.a('string');
    const [, perConnection] = /^object Socket\s+(\d+\.\d\d)\s+\d+$/.exec(socketRow!) ?? [];
    expect(Number(perConnection)).to.be.within(2.9, 3.1);
    expect(stdout).to.match(/^held by\s+a connection\s+bytes$/m);
    const prefix = /prefix (bench-[0-9a-f]+)\)/.exec(stdout)?.[1];
    expect(prefix, stdout).to.be.a('string');
    expect(await keysUnder(prefix!)).to.deep.equal([]);
  });

  it('interrupted (Ctrl-C) while connections idle, it stops its web node and leaves no key and no snapshot behind', async function () {
    const before = new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('pin-auth-heap-')));
    const { code, stderr } = await runNode(['dist/scripts/bench/connection-heap.js', '60', '--idle=60'], { REDIS_URL }, { interruptWhen: /connections, idle 60 s/ });
    expect(code, stderr.slice(-3000)).to.equal(130);
    expect(stderr).to.include('interrupted: stopping the stack and cleaning the prefix');
    const prefix = /under (bench-[0-9a-f]+);/.exec(stderr)?.[1];
    expect(prefix, stderr).to.be.a('string');
    expect(await keysUnder(prefix!)).to.deep.equal([]);
    const left = readdirSync(tmpdir()).filter((f) => f.startsWith('pin-auth-heap-') && !before.has(f));
    expect(left).to.deep.equal([]);
  });

  it('refuses a count it cannot measure, with its usage', async function () {
    const { code, stderr } = await runNode(['dist/scripts/bench/connection-heap.js', '5'], { REDIS_URL });
    expect(code).to.equal(2);
    expect(stderr).to.match(/^usage: npm run bench:connection-heap/);
  });
});
