import { expect } from 'chai';
import { PRODUCTION_ENV } from '../helpers/production.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startProcess, stopProcess, type ServiceProcess } from '../helpers/processes.js';

/**
 * docs/operations.md "Logs": in production every line a process writes is one JSON object,
 * also what a library prints on its own. BullMQ warns on the console about a Redis whose
 * eviction policy is not `noeviction` (once per connection it checks): a private Redis with
 * `allkeys-lru` makes it speak.
 */
describe('ops: every log line is one JSON object, library warnings included', function () {
  let redis: PrivateRedis;
  let proc: ServiceProcess | undefined;
  before(async function () {
    this.timeout(30000);
    redis = await PrivateRedis.start(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
  });
  after(async function () {
    this.timeout(40000);
    if (proc) await stopProcess(proc);
    await redis?.kill();
  });

  it('a web and worker process on a Redis that may evict: the eviction warnings are JSON lines at warn', async function () {
    this.timeout(120000);
    proc = await startProcess('all', { ...PRODUCTION_ENV, REDIS_URL: redis.url, KEY_PREFIX: 'loglines' });
    await proc.waitForOutput(/workers started/);
    await proc.waitForOutput(/Eviction policy is allkeys-lru/);
    await stopProcess(proc);
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    const notJson = lines.filter((l) => {
      try {
        const parsed: unknown = JSON.parse(l);
        return typeof parsed !== 'object' || parsed === null || Array.isArray(parsed);
      } catch {
        return true;
      }
    });
    expect(notJson, 'lines that are not one JSON object').to.deep.equal([]);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const eviction = records.filter((r) => /Eviction policy is allkeys-lru/.test(String(r.message)));
    expect(eviction.length).to.be.greaterThan(0);
    for (const r of eviction) expect(r, JSON.stringify(r)).to.include({ level: 'warn', source: 'console' });
  });
});
