import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { Server } from 'socket.io';
import { loadConfig } from '../../src/config.js';
import { keys as keySchema } from '../../src/redis/keys.js';
import { connect, type RedisClient } from '../../src/redis/connection.js';
import { Scripts } from '../../src/redis/scripts.js';
import { createIntake, inboundJobId } from '../../src/queues/intake.js';
import { partitionOf } from '../../src/queues/partitions.js';
import { createQueues } from '../../src/queues/queues.js';
import { shardedEmitter } from '../../src/realtime/notifier.js';
import { socketAdapter } from '../../src/realtime/adapter.js';
import { eventually } from '../helpers/http.js';
import { ClusterTopology } from '../helpers/redis-topology.js';
import { connected, type TestClient } from '../realtime/clients.js';

/**
 * Groundwork for Redis Cluster on a real 3-primary cluster on loopback: the connection factory,
 * BullMQ queues under a hash-tagged prefix, Socket.IO through the sharded adapter (and a
 * worker's emit reaching it), and the spread of the cluster key schema over the primaries.
 */
describe('redis: Cluster groundwork (3 primaries)', function () {
  this.timeout(90000);
  let topo: ClusterTopology | undefined;
  const clients: RedisClient[] = [];
  const config = () => loadConfig({ ...topo!.env(), KEY_PREFIX: 'cl' });
  const open = (role: 'command' | 'worker' | 'subscriber'): RedisClient => {
    const c = connect(config().redis, role, `test:${role}`);
    clients.push(c);
    return c;
  };

  before(async function () {
    topo = await ClusterTopology.start({ primaries: 3 });
  });
  after(async function () {
    for (const c of clients) c.disconnect();
    await topo?.stop();
  });

  it('connect() gives a Cluster client for REDIS_CLUSTER_NODES that reaches every shard', async function () {
    const c = open('command');
    expect(c).to.be.instanceOf(Cluster);
    await eventually(async () => (c.status === 'ready' ? true : undefined), 10000);
    for (let i = 0; i < 300; i++) await c.set(`cl:probe:${i}`, 'x');
    const shares = await topo!.keysPerPrimary();
    expect(shares).to.have.length(3);
    for (const s of shares) expect(s.keys).to.be.greaterThan(50);
  });

  it('runs BullMQ queues with a hash-tagged prefix per queue: every job processed once', async function () {
    const keys = keySchema('cl');
    const connection = open('worker') as Cluster;
    const names = ['inbound', 'expiry', 'outbound'];
    const seen = new Map<string, number>();
    const queues = names.map((n) => new Queue(n, { connection, prefix: keys.queuePrefix(n) }));
    const workers = names.map(
      (n) =>
        new Worker(
          n,
          async (job) => {
            seen.set(`${n}:${job.id}`, (seen.get(`${n}:${job.id}`) ?? 0) + 1);
          },
          { connection, prefix: keys.queuePrefix(n), concurrency: 8 },
        ),
    );
    try {
      for (const q of queues) await q.addBulk(Array.from({ length: 100 }, (_, i) => ({ name: 'j', data: { i }, opts: { jobId: `j${i}` } })));
      await eventually(async () => (seen.size === 300 ? true : undefined), 30000, 100);
      expect([...seen.values()].every((n) => n === 1)).to.equal(true);
      // each queue is one slot; the three queues need not share one
      const slots = new Set(await Promise.all(names.map((n) => (connection as Cluster).call('CLUSTER', 'KEYSLOT', `${keys.queuePrefix(n)}:${n}:wait`))));
      expect(slots.size).to.equal(3);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all(queues.map((q) => q.close()));
    }
  });

  it('Socket.IO through the sharded adapter: a room broadcast and a worker emit cross nodes', async function () {
    const channel = `cl:socket.io:${randomBytes(3).toString('hex')}`;
    const servers: { io: Server; http: http.Server; url: string }[] = [];
    const sockets: TestClient[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const httpServer = http.createServer();
        const io = new Server(httpServer, { adapter: socketAdapter(true, open('subscriber'), open('subscriber'), channel) });
        io.on('connection', (s) => void s.join('room-a'));
        // as realtime/server.ts does with a worker's server-side emit: deliver to local sockets
        io.on('worker-event', (room: string, payload: unknown) => io.local.to(room).emit('delivered', payload));
        httpServer.listen(0, '127.0.0.1');
        await once(httpServer, 'listening');
        servers.push({ io, http: httpServer, url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}` });
      }
      const onB = await connected(servers[1]!.url);
      sockets.push(onB);
      // the dynamic room channel is subscribed once the socket joined on B
      await eventually(
        async () => {
          servers[0]!.io.to('room-a').emit('hello', { from: 'A' });
          return onB.of('hello').length > 0 ? true : undefined;
        },
        10000,
        200,
      );
      expect(onB.of('hello')[0]).to.deep.equal({ from: 'A' });

      const emitter = shardedEmitter(open('command') as Cluster, open('subscriber') as Cluster, channel);
      await eventually(
        async () => {
          emitter.serverSideEmit('worker-event', 'room-a', { ok: 1 });
          return onB.of('delivered').length > 0 ? true : undefined;
        },
        10000,
        200,
      );
      expect(onB.of('delivered')[0]).to.deep.equal({ ok: 1 });
      emitter.close();
    } finally {
      for (const s of sockets) s.close();
      for (const s of servers) {
        s.io.close();
        s.http.close();
      }
    }
  });

  it("adds the web's inbound jobs to the queue of each message's partition, each queue on its own slot", async function () {
    const c = open('worker');
    const keys = keySchema(`cl-${randomBytes(3).toString('hex')}`);
    const PARTITIONS = 6;
    const queues = createQueues(c, keys.queuePrefix, 1, PARTITIONS);
    try {
      const intake = createIntake(queues, async () => undefined);
      const ids = Array.from({ length: 60 }, (_, i) => `cluster-msg-${i}`);
      // twice: a redelivery is the same job
      for (let round = 0; round < 2; round++) {
        await Promise.all(ids.map((id) => intake.add({ provider: 'evolution', id, phone: '15550001111', text: 'hello', displayName: null }, Date.now())));
      }
      for (let k = 0; k < PARTITIONS; k++) {
        const mine = ids.filter((id) => partitionOf(id, PARTITIONS) === k);
        expect(mine.length, `partition ${k}`).to.be.greaterThan(0);
        expect((await queues.inbound[k]!.getJobCounts('waiting')).waiting, `partition ${k}`).to.equal(mine.length);
        for (const id of mine) expect((await queues.inbound[k]!.getJob(inboundJobId(id)))?.data.message.id).to.equal(id);
      }
      // a queue's keys all carry its prefix's hash tag: the prefix's slot is the queue's
      const slots = await Promise.all(queues.inbound.map((q) => (c as Cluster).call('CLUSTER', 'KEYSLOT', keys.queuePrefix(q.name))));
      expect(new Set(slots).size).to.equal(PARTITIONS);
    } finally {
      await Promise.all(queues.inbound.map((q) => q.obliterate({ force: true })));
      await queues.close();
    }
  });

  it('runs the scripts that declare their keys (complete-login) on the shards their keys hash to', async function () {
    const c = open('worker');
    const scripts = new Scripts(c);
    const keys = keySchema('cl');
    // the login's last step, on registrations spread over the shards: completes once, then says so
    for (let i = 0; i < 6; i++) {
      const rk = keys.registration(`h${i}`);
      await c.hset(rk, 'pinId', `pin${i}`, 'state', 'claimed', 'messageId', `msg${i}`, 'expiresAt', Date.now() + 60000);
      expect(await scripts.run('complete-login', [rk], [`msg${i}`, '{"token":"t"}', 60000])).to.equal('completed');
      expect(await scripts.run('complete-login', [rk], [`msg${i}`, '{"token":"t"}', 60000])).to.equal('already');
      expect(await c.hget(rk, 'state')).to.equal('verified');
      await c.del(rk);
    }
  });

  it('spreads the keys of 10,000 logins over the three primaries (cluster key schema)', async function () {
    // a waiting client: 70,000 writes at once outrun the request path's 2 s command timeout on a busy machine
    const c = open('worker');
    const before = await topo!.keysPerPrimary();
    const keys = keySchema('cl');
    const id = () => randomBytes(16).toString('base64url');
    for (let batch = 0; batch < 10; batch++) {
      // one command each: a cluster pipeline must stay within one slot
      const writes: Promise<unknown>[] = [];
      const p = { set: (k: string, v: string) => writes.push(c.set(k, v)) };
      for (let i = 0; i < 1000; i++) {
        const [pinHash, emoji, user, sid, msg] = [id(), id(), id(), id(), id()];
        const phone = `+44${String(7000000000 + batch * 1000 + i)}`;
        // what one login leaves (the emoji key is freed at the login; counted as written)
        p.set(keys.registration(pinHash), 'r');
        p.set(keys.emoji(emoji), pinHash);
        p.set(keys.message(msg), 'n');
        p.set(keys.userByPhone(phone), user);
        p.set(keys.user(user), 'u');
        p.set(keys.userSessions(user), sid);
        p.set(keys.session(user, sid), 's');
      }
      await Promise.all(writes);
    }
    const after = await topo!.keysPerPrimary();
    const added = after.map((a) => a.keys - (before.find((b) => b.port === a.port)?.keys ?? 0));
    const total = added.reduce((x, y) => x + y, 0);
    expect(total).to.equal(70000);
    const shares = added.map((n) => n / total);
    console.log(`      keys of 10,000 logins per primary: ${added.join(' / ')} (${shares.map((s) => `${(100 * s).toFixed(1)}%`).join(' / ')})`);
    // an even split is 33.3% each; hash tags per entity keep every primary within a few points of it
    for (const s of shares) expect(s).to.be.within(0.3, 0.37);
  });
});
