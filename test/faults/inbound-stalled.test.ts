import { once } from 'node:events';
import { expect } from 'chai';
import { Queue, Worker, type Job } from 'bullmq';
import { failedForGood, INBOUND_ATTEMPTS, retryOrGiveUp, OTHER_FAULT_ATTEMPTS } from '../../src/queues/inbound-retry.js';
import { keys } from '../../src/redis/keys.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

/**
 * How the worker tells an inbound job that failed for good (counted, logged, replayed by an
 * operator) from one BullMQ retries, read from BullMQ's documented API only: its `failed`
 * event's error is an UnrecoverableError, or the attempts are used up. A job that stalls past
 * maxStalledCount (a worker killed mid-job, again and again) must count as failed for good: this
 * runs it on a real BullMQ, so a release that reports it differently fails here.
 */
describe('faults: an inbound job failed for good, as BullMQ reports it', function () {
  this.timeout(30000);
  const prefix = uniquePrefix('stalled');
  const url = new URL(REDIS_URL);
  const connection = { host: url.hostname, port: Number(url.port || 6379) };
  const name = 'inbound';
  let queue: Queue;
  const workers: Worker[] = [];

  before(function () {
    queue = new Queue(name, { connection, prefix: keys(prefix).queuePrefix(name) });
  });
  after(async function () {
    await Promise.all(workers.map((w) => w.close(true)));
    await queue.close();
    await cleanPrefix(prefix);
  });

  it('a job stalled past maxStalledCount fails for good, however many attempts it has', async function () {
    await queue.add('message', { n: 1 }, { jobId: 'stalls', attempts: INBOUND_ATTEMPTS });
    // a worker takes the job and dies with it: fetched by hand, never finished, its lock lapses
    const dead = new Worker(name, null, { connection, prefix: keys(prefix).queuePrefix(name), autorun: false, lockDuration: 300 });
    workers.push(dead);
    const taken = (await dead.getNextJob('dead-token')) as Job | undefined;
    expect(taken?.id).to.equal('stalls');

    const live = new Worker(name, async () => 'done', { connection, prefix: keys(prefix).queuePrefix(name), stalledInterval: 200, maxStalledCount: 0 });
    workers.push(live);
    const [job, err] = (await once(live, 'failed')) as [Job, Error];
    expect(job.id).to.equal('stalls');
    expect(failedForGood(err, job.attemptsMade, job.opts.attempts), `${err.name}: ${err.message}`).to.equal(true);
    expect(await job.getState()).to.equal('failed');
  });

  it('a fault other than Redis ends the job after OTHER_FAULT_ATTEMPTS; a Redis fault never does', function () {
    const bug = new Error('a bug');
    expect(failedForGood(retryOrGiveUp(bug, 0), 1, INBOUND_ATTEMPTS)).to.equal(false);
    expect(failedForGood(retryOrGiveUp(bug, OTHER_FAULT_ATTEMPTS - 1), OTHER_FAULT_ATTEMPTS, INBOUND_ATTEMPTS)).to.equal(true);
    const outage = Object.assign(new Error('OOM command not allowed when used memory > maxmemory'), { name: 'ReplyError' });
    expect(failedForGood(retryOrGiveUp(outage, 10 * OTHER_FAULT_ATTEMPTS), 10 * OTHER_FAULT_ATTEMPTS + 1, INBOUND_ATTEMPTS)).to.equal(false);
  });
});
