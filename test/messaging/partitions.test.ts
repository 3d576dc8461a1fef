import { expect } from 'chai';
import { Queue } from 'bullmq';
import { evolutionMessage } from '../helpers/gateway.js';
import { randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { eventually, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/redis.js';
import { keys } from '../../src/redis/keys.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { inboundQueueName, outboundQueueName, partitionOf } from '../../src/queues/partitions.js';
import { postWebhook } from './support.js';

const PARTITIONS = 3;
const LOGINS = 30;

/**
 * INBOUND_PARTITIONS = 3 on one Redis (and so 3 outbound queues): each accepted message is a job
 * on the inbound queue of its id's partition, and every message still ends in exactly one
 * login (a redelivery included). On a cluster this is what spreads the inbound
 * path over shards (queues/partitions.ts); here it checks the routing and the completeness.
 * The chat replies of those logins go to the outbound queue of their job id's hash, once each.
 */
describe('messaging: the inbound path in partitions', function () {
  let stack: InProcessStack;
  const url = new URL(REDIS_URL);
  let queues: Queue[] = [];
  let outQueues: Queue[] = [];

  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'parts',
      webs: 1,
      workers: 0,
      env: { MESSAGING_PROVIDER: 'log', INBOUND_PARTITIONS: String(PARTITIONS) },
    });
    const open = (name: string) =>
      new Queue(name, { connection: { host: url.hostname, port: Number(url.port || 6379) }, prefix: keys(stack.prefix).queuePrefix(name) });
    queues = Array.from({ length: PARTITIONS }, (_, k) => open(inboundQueueName(k)));
    outQueues = Array.from({ length: PARTITIONS }, (_, k) => open(outboundQueueName(k)));
  });
  after(async function () {
    await Promise.all([...queues, ...outQueues].map((q) => q.close()));
    await stack?.stop();
  });

  it('hashes message ids evenly and stably', function () {
    const counts = new Array<number>(PARTITIONS).fill(0);
    for (let i = 0; i < 3000; i++) counts[partitionOf(`msg-${i}`, PARTITIONS)]!++;
    for (const c of counts) expect(c).to.be.within(850, 1150);
    expect(partitionOf('abc', PARTITIONS)).to.equal(partitionOf('abc', PARTITIONS));
    expect(partitionOf('abc', 1)).to.equal(0);
  });

  it('routes each message to its partition and every partition logs in', async function () {
    this.timeout(60000);
    const logins = Array.from({ length: LOGINS }, (_, i) => ({ pin: randomPin(), emoji: randomEmoji(), id: `PART-${i}` }));
    for (const l of logins) expect((await post(stack.url, '/register-pin', { pin: l.pin, emojiString: l.emoji })).status).to.equal(200);
    const bodies = logins.map((l) => JSON.stringify(evolutionMessage({ text: `PIN: ${l.emoji}`, id: l.id, phone: randomPhone() })));
    for (const raw of bodies) expect((await postWebhook(stack.url, raw)).status).to.equal(200);
    expect((await postWebhook(stack.url, bodies[0]!)).status).to.equal(200);

    // no worker yet: the messages wait, each a job on its partition's queue (the redelivery the same job)
    let total = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      const jobs = await queues[p]!.getWaiting(0, -1);
      expect(jobs.length, `partition ${p}`).to.be.greaterThan(0);
      for (const job of jobs) expect(partitionOf((job.data as InboundJob).message.id, PARTITIONS)).to.equal(p);
      total += jobs.length;
    }
    expect(total).to.equal(LOGINS);

    await stack.addWorker();
    for (const l of logins) {
      await eventually(
        async () => {
          const r = await post<{ verified: boolean }>(stack.url, '/check-login', { pin: l.pin });
          return r.status === 200 && r.body.verified ? true : undefined;
        },
        30000,
        100,
      );
    }
    const completed = await eventually(
      async () => {
        const c = await Promise.all(queues.map((q) => q.getJobCounts('completed', 'failed', 'waiting', 'active')));
        return c.reduce((s, x) => s + (x.completed ?? 0), 0) === LOGINS ? c : undefined;
      },
      20000,
      100,
    );
    for (const c of completed) {
      expect(c.completed).to.be.greaterThan(0);
      expect(c.failed).to.equal(0);
    }

    // one "signed in" reply per login, each on the outbound queue of its job id's partition
    const sent = await eventually(
      async () => {
        const c = await Promise.all(outQueues.map((q) => q.getJobCounts('completed', 'failed')));
        return c.reduce((s, x) => s + (x.completed ?? 0), 0) === LOGINS ? c : undefined;
      },
      30000,
      100,
    );
    for (const [p, c] of sent.entries()) {
      expect(c.completed, `outbound partition ${p}`).to.be.greaterThan(0);
      expect(c.failed).to.equal(0);
      for (const job of await outQueues[p]!.getCompleted(0, -1)) expect(partitionOf(String(job.id), PARTITIONS), String(job.id)).to.equal(p);
    }
  });
});
