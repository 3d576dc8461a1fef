import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { fullLogin, randomEmoji, randomPin, sendChat } from '../helpers/flow.js';
import { eventually, post, type JsonResponse } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startStack, type Stack } from '../helpers/processes.js';
import { ADMIN, sample, scrape } from '../ops/support.js';

const linkUp = async (replica: PrivateRedis): Promise<boolean | undefined> => {
  const c = replica.client();
  try {
    return /master_link_status:up/.test(await c.info('replication')) ? true : undefined;
  } finally {
    c.disconnect();
  }
};

/**
 * REDIS_WAIT_REPLICAS=1 with its only replica gone degrades instead of refusing: a replica that
 * is not connected holds nothing a failover could promote, so webhooks are accepted on the
 * primary, counted in pinauth_replica_wait_degraded_total and logged. A replica that is
 * connected but does not acknowledge in time still makes the webhook 503 (it could be promoted
 * without the message). When the replica is back, it is waited for again.
 */
describe('redis: REDIS_WAIT_REPLICAS with the replica missing or late', function () {
  this.timeout(90000);
  let primary: PrivateRedis;
  let replica: PrivateRedis;
  let stack: Stack;
  let admin: Redis;

  before(async function () {
    primary = await PrivateRedis.start(['--repl-diskless-sync-delay', '0']);
    replica = await PrivateRedis.start(['--replicaof', '127.0.0.1', String(primary.port), '--enable-debug-command', 'yes']);
    await eventually(() => linkUp(replica), 15000, 100);
    admin = primary.client();
    stack = await startStack({
      name: 'replica-wait',
      env: { REDIS_URL: primary.url, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '300', CHAT_REPLIES: 'false', METRICS_INTERVAL_MS: '300', ...ADMIN },
    });
  });
  after(async function () {
    admin?.disconnect();
    await stack?.stop();
    await replica?.kill();
    await primary?.kill();
  });

  /** A registration's webhook sent while the replica stalls (still connected): WAIT gets no acknowledgement within 300 ms. */
  const webhookWhileReplicaStalls = async (): Promise<JsonResponse> => {
    const pin = randomPin();
    const emoji = randomEmoji();
    expect((await post(stack.url, '/register-pin', { pin, emojiString: emoji })).status).to.equal(200);
    const sleeper = replica.client();
    const stalled = sleeper.call('DEBUG', 'SLEEP', '2').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    try {
      return await sendChat(stack.url, `PIN: ${emoji}`);
    } finally {
      await stalled;
      sleeper.disconnect();
    }
  };
  const degraded = async (): Promise<number> => sample(await scrape(stack.url), 'pinauth_replica_wait_degraded_total');

  it('with the replica connected, logins wait for it and nothing is degraded', async function () {
    await fullLogin(stack.url);
    expect(await degraded()).to.equal(0);
  });

  it('a connected replica that does not acknowledge in time: the webhook answers 503', async function () {
    const hook = await webhookWhileReplicaStalls();
    expect(hook.status, hook.text).to.equal(503);
    expect(hook.body).to.include({ error: 'NETWORK_ERROR' });
  });

  it('the replica gone: webhooks are accepted and logins happen, counted as degraded and logged', async function () {
    await replica.kill();
    await eventually(async () => (/connected_slaves:0/.test(await admin.info('replication')) ? true : undefined), 15000, 100);
    await fullLogin(stack.url);
    await fullLogin(stack.url);
    await eventually(async () => ((await degraded()) >= 2 ? true : undefined), 10000, 200);
    expect(stack.webs[0]!.output()).to.match(/REDIS_WAIT_REPLICAS: fewer replicas connected than asked/);
  });

  it('the replica back: it is waited for again (a stall answers 503 once more)', async function () {
    await replica.start();
    await eventually(() => linkUp(replica), 15000, 100);
    // the barrier counts the connected replicas again within 5 s
    await new Promise((r) => setTimeout(r, 5500));
    await fullLogin(stack.url);
    const hook = await webhookWhileReplicaStalls();
    expect(hook.status, hook.text).to.equal(503);
  });
});
