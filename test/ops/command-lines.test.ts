import { expect } from 'chai';
import { freePort, runNode } from '../helpers/processes.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

/**
 * replay-inbound as a command line: --help and wrong flags touch nothing (the Redis given is one
 * nobody listens on, so any attempt to act would fail or hang), and a run says where it acts.
 * Its replay itself: test/faults/inbound-outage.test.ts (a dry run, then the real one).
 */
describe('ops: replay-inbound parses its command line', function () {
  this.timeout(30000);
  const SCRIPT = 'dist/src/bin/replay-inbound.js';
  let nowhere: Record<string, string>;
  before(async () => (nowhere = { REDIS_URL: `redis://127.0.0.1:${await freePort()}` }));

  it('--help prints the usage and exits 0, doing nothing', async function () {
    const r = await runNode([SCRIPT, '--help'], nowhere);
    expect(r.code).to.equal(0);
    expect(r.stdout)
      .to.match(/^usage: npm run replay-inbound -- \[--dry-run\]/)
      .and.to.match(/--dry-run +count what would be replayed/);
    expect(r.stderr).to.equal('');
  });

  for (const args of [['--dryrun'], ['-n'], ['now'], ['--dry-run=yes']]) {
    it(`refuses ${args.join(' ')} with exit 2, doing nothing`, async function () {
      const r = await runNode([SCRIPT, ...args], nowhere);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.match(/^replay-inbound: .*\nusage:/);
      expect(r.stdout).to.equal('');
    });
  }

  it('says which Redis (no password) and prefix it acts on; a dry run says it changes nothing', async function () {
    const prefix = uniquePrefix('replay-cli');
    const url = new URL(REDIS_URL);
    try {
      const dry = await runNode([SCRIPT, '--dry-run'], { REDIS_URL, KEY_PREFIX: prefix });
      expect(dry.code, dry.stderr).to.equal(0);
      expect(dry.stdout.split('\n')[0]).to.equal(
        `replay-inbound (dry run: nothing is changed): redis redis://${url.hostname}:${url.port || 6379}, KEY_PREFIX ${prefix}`,
      );
      expect(dry.stdout).to.match(/^inbound: 0 failed jobs would be replayed$/m);
      // `npm run replay-inbound --dry-run` (the `--` forgotten): npm keeps the flag and sets npm_config_dry_run
      const viaNpm = await runNode([SCRIPT], { REDIS_URL, KEY_PREFIX: prefix, npm_config_dry_run: 'true' });
      expect(viaNpm.stdout).to.match(/dry run: nothing is changed/);
      const real = await runNode([SCRIPT], { REDIS_URL, KEY_PREFIX: prefix });
      expect(real.stdout.split('\n')[0]).to.equal(`replay-inbound: redis redis://${url.hostname}:${url.port || 6379}, KEY_PREFIX ${prefix}`);
    } finally {
      await cleanPrefix(prefix);
    }
  });
});
