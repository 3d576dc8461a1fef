import { keys } from '../../src/redis/keys.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { messageKey } from '../../src/messaging/inbound.js';
import { inboundJobId } from '../../src/queues/intake.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually, request } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startProcess, stopProcess, type ServiceProcess } from '../helpers/processes.js';
import { uniquePrefix } from '../helpers/redis.js';

const INSTANCE = 'durability';

/**
 * A webhook answered 200 survives a Redis crash: a private Redis with the AOF settings of
 * docs/operations.md (appendonly yes, appendfsync always) is killed with SIGKILL while webhooks
 * stream in, and restarted from its AOF. Every message that got a 200 must come out of the
 * restarted Redis as an inbound job; a message answered 503 (or cut off) may or may not.
 */
describe('faults: an accepted webhook survives kill -9 of Redis (AOF, appendfsync always)', function () {
  this.timeout(120000);
  let dir: string;
  let redis: PrivateRedis;
  let web: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let probe: Redis | undefined;
  const prefix = uniquePrefix('durability');

  before(async function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pinauth-aof-'));
    redis = await PrivateRedis.start(['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir, '--maxmemory-policy', 'noeviction']);
  });
  after(async function () {
    probe?.disconnect();
    await Promise.all([web, worker].filter((p) => p !== undefined).map((p) => stopProcess(p)));
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every 200 is in Redis after the restart and becomes exactly one inbound job', async function () {
    const env = { REDIS_URL: redis.url, KEY_PREFIX: prefix, CHAT_REPLIES: 'false' };
    web = await startProcess('web', env);
    const accepted = new Set<string>();
    const tally = { tried: 0, ok: 0, refused: 0, cut: 0 };
    let next = 0;
    let stop = false;
    // 8 senders post chat messages without pause; the crash comes in the middle of it
    const sender = async (): Promise<void> => {
      while (!stop) {
        const id = `DUR${String(next++).padStart(6, '0')}`;
        tally.tried++;
        try {
          const r = await request(web!.url, 'POST', '/messaging-endpoint', { json: evolutionMessage({ text: `hello ${id}`, id, instance: INSTANCE }) });
          if (r.status === 200) {
            tally.ok++;
            accepted.add(id);
          } else tally.refused++;
        } catch {
          tally.cut++;
        }
      }
    };
    const senders = Array.from({ length: 8 }, sender);
    await eventually(async () => (accepted.size >= 200 ? true : undefined), 20000, 20);
    await redis.kill();
    const atCrash = accepted.size;
    await new Promise((r) => setTimeout(r, 500));
    await redis.start();
    await eventually(async () => (accepted.size >= atCrash + 100 ? true : undefined), 20000, 20);
    stop = true;
    await Promise.all(senders);

    // before any worker runs: the job each 200 promised is in the restarted Redis
    probe = redis.client();
    const queue = new Queue('inbound', { connection: probe, prefix: keys(prefix).queuePrefix('inbound') });
    const lost: string[] = [];
    for (const id of accepted) {
      if (!(await queue.getJob(inboundJobId(messageKey('evolution', INSTANCE, id))))) lost.push(id);
    }
    // drain: a worker runs every job
    worker = await startProcess('worker', env);
    const counts = await eventually(
      async () => {
        const c = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
        return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0 ? c : undefined;
      },
      30000,
      100,
    );
    await queue.close();
    // eslint-disable-next-line no-console
    console.log(
      `      webhooks tried ${tally.tried}: 200 ${tally.ok} (${atCrash} before the crash), 503 ${tally.refused}, cut off ${tally.cut}; ` +
        `lost after the restart: ${lost.length}; inbound jobs ${JSON.stringify(counts)}`,
    );
    expect(lost, 'accepted webhooks missing after the restart').to.deep.equal([]);
    expect(tally.refused + tally.cut, 'the crash was felt').to.be.greaterThan(0);
    // one job per message: the job id is the message's, whatever was delivered twice
    expect(counts.failed).to.equal(0);
    expect(counts.completed).to.be.at.least(accepted.size);
  });
});
