import { Writable } from 'node:stream';
import { expect } from 'chai';
import winston from 'winston';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import { PRODUCTION_ENV } from '../helpers/production.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { runNode, startProcess, stopProcess, type ServiceProcess } from '../helpers/processes.js';

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

  it('a production process refused by its configuration says why in one JSON line, every problem listed, and exits 1', async function () {
    const { WEBHOOK_JWT_KEY: _w, ...open } = PRODUCTION_ENV;
    const run = await runNode(['dist/src/bin/web.js'], { ...open, REDIS_URL: redis.url, KEY_PREFIX: 'bad prefix' });
    expect(run.code).to.equal(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines, run.stderr).to.have.length(1);
    const record = JSON.parse(lines[0]!) as { level: string; problems: string[] };
    expect(record.level).to.equal('error');
    expect(record.problems.some((p) => p.startsWith('KEY_PREFIX'))).to.equal(true);
    expect(record.problems.some((p) => p.startsWith('One of WEBHOOK_SECRET'))).to.equal(true);
  });
});

/** LOG_LEVEL: a line below it is dropped before winston formats it; what passes is formatted as before. */
describe('ops: LOG_LEVEL drops a line before it is formatted', function () {
  /** Replaces the logger's transports with winston's Stream transport into an array of the lines written. */
  const linesOf = (log: Logger): Record<string, unknown>[] => {
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    log.clear();
    log.add(new winston.transports.Stream({ stream, eol: '' }));
    return lines;
  };

  it("at warn: warn and error lines are JSON with their fields and a timestamp; info and debug lines reach no transport, the child logger's neither", function () {
    const log = createLogger({ level: 'warn', production: true, role: 'web', instance: 'web-1' });
    const lines = linesOf(log);
    log.info('not written', { pinId: 'p1' });
    log.debug('not written either');
    log.child({ requestId: 'r1' }).info('nor this');
    log.warn('written', { pinId: 'p2' });
    log.child({ requestId: 'r2' }).error('and this');
    expect(lines.map((l) => l.message)).to.deep.equal(['written', 'and this']);
    expect(lines[0]).to.include({ level: 'warn', pinId: 'p2', role: 'web', instance: 'web-1' });
    expect(lines[1]).to.include({ level: 'error', requestId: 'r2' });
    expect(Date.parse(String(lines[0]!.timestamp))).to.be.greaterThan(0);
  });

  it("the logger's level read when a line is written: lowered to info, info lines are written", function () {
    const log = createLogger({ level: 'warn', production: true, role: 'worker', instance: 'worker-1' });
    const lines = linesOf(log);
    log.info('before');
    log.level = 'info';
    log.info('after');
    log.debug('still below');
    expect(lines.map((l) => l.message)).to.deep.equal(['after']);
  });
});
