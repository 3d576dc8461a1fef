import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { ensureDebianPackages } from './debian.js';
import { eventually } from './http.js';
import { freePort } from './processes.js';

/**
 * Private Redis topologies for tests, from Debian's `redis-server` and `redis-sentinel` on free
 * loopback ports, in a temporary directory each, killed and removed by stop(). The shared Redis
 * at 6379 is never touched.
 */

/** One redis-server or redis-sentinel process. */
export class RedisProcess {
  private constructor(
    readonly port: number,
    readonly child: ChildProcess,
  ) {}

  /**
   * Starts a process on a port freePort chose, again on a new one (up to three times) if it exits
   * at once: the port, or a cluster node's bus port, was taken between the check and its bind.
   */
  static async start(
    binary: 'redis-server' | 'redis-sentinel',
    argsFor: (port: number) => string[],
    opts: { clusterBus?: boolean } = {},
  ): Promise<RedisProcess> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort(opts);
      try {
        return await RedisProcess.spawn(binary, argsFor(port), port);
      } catch (err) {
        if (attempt >= 3 || !(err instanceof Error && err.message.includes('exited with'))) throw err;
      }
    }
  }

  private static async spawn(binary: 'redis-server' | 'redis-sentinel', args: string[], port: number): Promise<RedisProcess> {
    const child = binary === 'redis-sentinel' ? spawnSentinel(args) : spawn(binary, args, { stdio: 'ignore' });
    const proc = new RedisProcess(port, child);
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${binary} on ${port} exited with ${code}`))));
    const ready = eventually(async () => {
      const probe = proc.client({ lazyConnect: true, retryStrategy: () => null });
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } finally {
        probe.disconnect();
      }
    }, 10000);
    // an exit before the first PONG (its port taken) ends the wait at once
    await Promise.race([ready, exited]);
    exited.catch(() => undefined);
    return proc;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** A plain client to this process (the caller disconnects it). */
  client(extra: RedisOptions = {}): Redis {
    const c = new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 1, ...extra });
    c.on('error', () => undefined);
    return c;
  }

  /** Asks this process something and disconnects. */
  async ask(...args: (string | number)[]): Promise<unknown> {
    const c = this.client();
    try {
      return await c.call(String(args[0]), ...args.slice(1));
    } finally {
      c.disconnect();
    }
  }

  /**
   * How many replicas hold everything written so far, waiting up to `timeoutMs` for `replicas`.
   * WAIT counts acknowledgements of the calling connection's own writes (none, on a fresh one:
   * it would answer at once), so a marker is written first on the same connection; replication
   * is in order, so the writes of every client before it are held too.
   */
  async replicated(replicas: number, timeoutMs: number): Promise<number> {
    const c = this.client();
    try {
      await c.set('test:replication-mark', String(Date.now()));
      return Number(await c.call('WAIT', replicas, timeoutMs));
    } finally {
      c.disconnect();
    }
  }

  async kill(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

const SENTINEL = '/usr/bin/redis-sentinel';

/**
 * Debian's redis-sentinel (installed when missing); if it can't be, the same binary's sentinel
 * mode (`redis-server <conf> --sentinel`, which is all redis-sentinel is).
 */
function spawnSentinel(args: string[]): ChildProcess {
  const missing = ensureDebianPackages([SENTINEL], ['redis-sentinel']);
  return missing === undefined ? spawn(SENTINEL, args, { stdio: 'ignore' }) : spawn('redis-server', [...args, '--sentinel'], { stdio: 'ignore' });
}

const serverArgs = (port: number, dir: string): string[] => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--dir',
  dir,
  '--save',
  '',
  '--appendonly',
  'no',
  // a replica syncs at once instead of after the default 5 s of waiting for more replicas
  '--repl-diskless-sync-delay',
  '0',
];

/** INFO section as a map. */
export async function info(proc: RedisProcess, section: string): Promise<Record<string, string>> {
  const text = String(await proc.ask('INFO', section));
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)]),
  );
}

/**
 * A primary, its replica(s) and three sentinels (quorum 2) watching them, with a short
 * down-after-milliseconds so a killed primary is failed over in a couple of seconds. With two
 * replicas the promoted one still has a replica after a failover (what REDIS_WAIT_REPLICAS=1
 * needs to accept writes again); the sentinels repoint the other one at it.
 */
export class SentinelTopology {
  readonly name = 'pinauth-test';
  private constructor(
    readonly dir: string,
    readonly servers: RedisProcess[],
    readonly sentinels: RedisProcess[],
  ) {}

  static async start(opts: { replicas?: number; downAfterMs?: number; failoverTimeoutMs?: number } = {}): Promise<SentinelTopology> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pinauth-sentinel-'));
    const servers: RedisProcess[] = [];
    const sentinels: RedisProcess[] = [];
    const topo = new SentinelTopology(dir, servers, sentinels);
    try {
      const primary = await RedisProcess.start('redis-server', (port) => serverArgs(port, dir));
      const primaryPort = primary.port;
      servers.push(primary);
      for (let i = 0; i < (opts.replicas ?? 1); i++) {
        const replica = await RedisProcess.start('redis-server', (port) => [...serverArgs(port, dir), '--replicaof', '127.0.0.1', String(primaryPort)]);
        servers.push(replica);
        await eventually(async () => ((await info(replica, 'replication')).master_link_status === 'up' ? true : undefined), 15000, 100);
      }
      for (let i = 0; i < 3; i++) {
        const sentinel = await RedisProcess.start('redis-sentinel', (port) => {
          const file = path.join(dir, `sentinel-${port}.conf`);
          writeFileSync(
            file,
            [
              `port ${port}`,
              'bind 127.0.0.1',
              `dir ${dir}`,
              `sentinel monitor ${topo.name} 127.0.0.1 ${primaryPort} 2`,
              `sentinel down-after-milliseconds ${topo.name} ${opts.downAfterMs ?? 1000}`,
              `sentinel failover-timeout ${topo.name} ${opts.failoverTimeoutMs ?? 5000}`,
              `sentinel parallel-syncs ${topo.name} 1`,
              '',
            ].join('\n'),
          );
          // the sentinel rewrites its config file (what it learnt), so each has its own
          return [file];
        });
        sentinels.push(sentinel);
      }
      // ready when every sentinel knows the replica and the two other sentinels (found through
      // hello messages on the primary, every 2 s): only then can they agree on a failover
      await eventually(
        async () => {
          for (const s of sentinels) {
            const replicas = (await s.ask('SENTINEL', 'REPLICAS', topo.name)) as unknown[];
            const peers = (await s.ask('SENTINEL', 'SENTINELS', topo.name)) as unknown[];
            if (replicas.length < servers.length - 1 || peers.length < 2) return undefined;
          }
          return true;
        },
        20000,
        200,
      );
      return topo;
    } catch (err) {
      await topo.stop();
      throw err;
    }
  }

  /** The service's environment to reach this topology through its sentinels. */
  env(): Record<string, string> {
    return {
      REDIS_SENTINELS: this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      REDIS_SENTINEL_NAME: this.name,
      // nothing listens there: every connection must go through the sentinels
      REDIS_URL: 'redis://127.0.0.1:1',
    };
  }

  /** The primary's port as the first live sentinel reports it. */
  async primaryPort(): Promise<number> {
    for (const s of this.sentinels) {
      if (!s.alive) continue;
      const addr = (await s.ask('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name)) as [string, string];
      return Number(addr[1]);
    }
    throw new Error('no sentinel alive');
  }

  async primary(): Promise<RedisProcess> {
    const port = await this.primaryPort();
    const p = this.servers.find((s) => s.port === port);
    if (!p) throw new Error(`primary on unknown port ${port}`);
    return p;
  }

  /** SIGKILLs the current primary; returns its port. */
  async killPrimary(): Promise<number> {
    const p = await this.primary();
    await p.kill();
    return p.port;
  }

  /** Waits until the sentinels name another primary and it answers as one; returns its port. */
  async waitForFailover(oldPort: number, timeoutMs = 30000): Promise<number> {
    return eventually(
      async () => {
        const port = await this.primaryPort();
        if (port === oldPort) return undefined;
        const p = this.servers.find((s) => s.port === port);
        if (!p || (await info(p, 'replication')).role !== 'master') return undefined;
        // and the replicas still alive follow it
        const live = this.servers.filter((s) => s.alive && s !== p).length;
        return Number((await info(p, 'replication')).connected_slaves) >= live ? port : undefined;
      },
      timeoutMs,
      100,
    );
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.servers].map((p) => p.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A Redis Cluster of `primaries` primaries (and `replicasPerPrimary` replicas each) on loopback,
 * made with `redis-cli --cluster create`: the 16,384 slots split evenly over the primaries.
 */
export class ClusterTopology {
  private constructor(
    readonly dir: string,
    readonly nodes: RedisProcess[],
  ) {}

  static async start(opts: { primaries?: number; replicasPerPrimary?: number } = {}): Promise<ClusterTopology> {
    const primaries = opts.primaries ?? 3;
    const replicas = opts.replicasPerPrimary ?? 0;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pinauth-cluster-'));
    const nodes: RedisProcess[] = [];
    const topo = new ClusterTopology(dir, nodes);
    try {
      for (let i = 0; i < primaries * (1 + replicas); i++) {
        const node = await RedisProcess.start(
          'redis-server',
          (port) => [
            ...serverArgs(port, dir),
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            path.join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout',
            '2000',
          ],
          { clusterBus: true },
        );
        nodes.push(node);
      }
      await new Promise<void>((resolve, reject) => {
        const cli = spawn(
          'redis-cli',
          ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        cli.stdout.on('data', (b: Buffer) => (out += b.toString()));
        cli.stderr.on('data', (b: Buffer) => (out += b.toString()));
        cli.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`redis-cli --cluster create: ${code}\n${out}`))));
      });
      // every node agrees the cluster is whole before anyone uses it
      await eventually(
        async () => {
          for (const n of nodes) if ((await info(n, 'cluster')).cluster_enabled !== '1') return undefined;
          for (const n of nodes) if (!String(await n.ask('CLUSTER', 'INFO')).includes('cluster_state:ok')) return undefined;
          return true;
        },
        20000,
        200,
      );
      return topo;
    } catch (err) {
      await topo.stop();
      throw err;
    }
  }

  /** The service's environment for this cluster. */
  env(): Record<string, string> {
    return { REDIS_CLUSTER_NODES: this.nodes.map((n) => `127.0.0.1:${n.port}`).join(','), REDIS_URL: 'redis://127.0.0.1:1' };
  }

  /** The primaries, each with the number of keys it holds (DBSIZE). */
  async keysPerPrimary(): Promise<{ port: number; keys: number }[]> {
    const out: { port: number; keys: number }[] = [];
    for (const n of this.nodes) {
      if ((await info(n, 'replication')).role !== 'master') continue;
      out.push({ port: n.port, keys: Number(await n.ask('DBSIZE')) });
    }
    return out;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
