import { expect } from 'chai';
import { ConfigError, loadConfig, shortRetryWindows, type RedisTopology } from '../../src/config.js';
import { clusterOptions, redisOptions, sentinelOptions } from '../../src/redis/connection.js';
import { runNode } from '../helpers/processes.js';

/** REDIS_SENTINELS / REDIS_CLUSTER_NODES / REDIS_WAIT_*: parsed once, refused with one line. */
describe('redis: topology configuration', function () {
  it('is one server by default, with no replica waits', function () {
    const c = loadConfig({});
    expect(c.redis).to.deep.equal({ kind: 'single', url: 'redis://127.0.0.1:6379', commandTimeoutMs: 2000 });
    expect(c.redisWait).to.deep.equal({ replicas: 0, timeoutMs: 1000 });
  });

  it('REDIS_COMMAND_TIMEOUT_MS sets how long a request waits for Redis, in every topology; workers wait for ever', function () {
    const single = loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '5000' }).redis as Extract<RedisTopology, { kind: 'single' }>;
    expect(redisOptions(single, 'command')).to.include({ commandTimeout: 5000, enableOfflineQueue: false });
    expect(redisOptions(single, 'worker').commandTimeout).to.equal(undefined);
    const sentinel = loadConfig({ REDIS_SENTINELS: 'h:1', REDIS_COMMAND_TIMEOUT_MS: '300' }).redis as Extract<RedisTopology, { kind: 'sentinel' }>;
    expect(sentinelOptions(sentinel, 'command')).to.include({ commandTimeout: 300 });
    const cluster = loadConfig({ REDIS_CLUSTER_NODES: 'a:1', REDIS_COMMAND_TIMEOUT_MS: '700' }).redis as Extract<RedisTopology, { kind: 'cluster' }>;
    expect(clusterOptions(cluster, 'command', 'n').redisOptions).to.include({ commandTimeout: 700 });
    for (const bad of ['0', '99', '60001', 'soon']) {
      expect(() => loadConfig({ REDIS_COMMAND_TIMEOUT_MS: bad }), bad).to.throw(ConfigError, /REDIS_COMMAND_TIMEOUT_MS/);
    }
  });

  it('warns of a retry window no longer than the command timeout: the retry after a late answer must find its result', function () {
    expect(shortRetryWindows(loadConfig({}))).to.deep.equal([]);
    expect(shortRetryWindows(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '10000' }))).to.deep.equal([
      'REFRESH_REUSE_SECONDS (10 s) is not longer than REDIS_COMMAND_TIMEOUT_MS (10000 ms): a retry after a late answer may find nothing',
    ]);
    const both = shortRetryWindows(loadConfig({ COLLECT_RETRY_SECONDS: '1', REFRESH_REUSE_SECONDS: '2' }));
    expect(both.map((w) => w.split(' ')[0])).to.deep.equal(['COLLECT_RETRY_SECONDS', 'REFRESH_REUSE_SECONDS']);
    // 0 switches a window off: nothing to warn of
    expect(shortRetryWindows(loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '30000', REFRESH_REUSE_SECONDS: '0', COLLECT_RETRY_SECONDS: '31' }))).to.deep.equal([]);
  });

  it('reads sentinels, the primary name and both passwords', function () {
    const c = loadConfig({
      REDIS_SENTINELS: 's1.example:26379, 10.0.0.2:26380,[::1]:26381',
      REDIS_SENTINEL_NAME: 'auth',
      REDIS_SENTINEL_PASSWORD: 'sp',
      REDIS_PASSWORD: 'dp',
      REDIS_WAIT_REPLICAS: '1',
    });
    expect(c.redis).to.deep.equal({
      kind: 'sentinel',
      sentinels: [
        { host: 's1.example', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'auth',
      sentinelPassword: 'sp',
      username: undefined,
      password: 'dp',
      commandTimeoutMs: 2000,
    });
    expect(c.redisWait.replicas).to.equal(1);
    const opts = sentinelOptions(c.redis as Extract<typeof c.redis, { kind: 'sentinel' }>, 'command');
    expect(opts).to.include({ name: 'auth', sentinelPassword: 'sp', password: 'dp', enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    expect(loadConfig({ REDIS_SENTINELS: 'h:1' }).redis).to.include({ name: 'mymaster' });
  });

  it('reads cluster seed nodes; cluster clients keep the role (fail fast for commands) and shard their subscriptions', function () {
    const c = loadConfig({ REDIS_CLUSTER_NODES: 'a:7000,b:7001', REDIS_USERNAME: 'u', REDIS_PASSWORD: 'p' });
    expect(c.redis).to.deep.equal({
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
      username: 'u',
      password: 'p',
      commandTimeoutMs: 2000,
    });
    const cluster = c.redis as Extract<typeof c.redis, { kind: 'cluster' }>;
    const cmd = clusterOptions(cluster, 'command', 'n');
    expect(cmd.enableOfflineQueue).to.equal(false);
    expect(cmd.redisOptions).to.include({ maxRetriesPerRequest: 0, username: 'u', password: 'p', connectionName: 'n' });
    expect(clusterOptions(cluster, 'subscriber', 'n').shardedSubscribers).to.equal(true);
    expect(clusterOptions(cluster, 'worker', 'n').redisOptions).to.include({ maxRetriesPerRequest: null });
  });

  it('a process refuses to start on a cluster with REDIS_WAIT_REPLICAS, with one line (WAIT is per primary)', async function () {
    const { code, stderr: err } = await runNode(['dist/src/bin/worker.js'], { NODE_ENV: 'test', REDIS_CLUSTER_NODES: '127.0.0.1:1', REDIS_WAIT_REPLICAS: '1' });
    expect(code).to.equal(1);
    expect(err.trim()).to.match(/^pin-auth: configuration error: REDIS_WAIT_REPLICAS is not available with REDIS_CLUSTER_NODES yet/);
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['sentinels and cluster nodes together', { REDIS_SENTINELS: 'a:1', REDIS_CLUSTER_NODES: 'b:2' }, /exclusive/],
    ['a sentinel without a port', { REDIS_SENTINELS: 'a:1,b' }, /REDIS_SENTINELS.*"b"/],
    ['a cluster node with port 0', { REDIS_CLUSTER_NODES: 'a:0' }, /REDIS_CLUSTER_NODES/],
    ['a cluster node with a port out of range', { REDIS_CLUSTER_NODES: 'a:70000' }, /REDIS_CLUSTER_NODES/],
    ['a negative REDIS_WAIT_REPLICAS', { REDIS_WAIT_REPLICAS: '-1' }, /REDIS_WAIT_REPLICAS/],
    ['a REDIS_WAIT_TIMEOUT_MS of 0', { REDIS_WAIT_TIMEOUT_MS: '0' }, /REDIS_WAIT_TIMEOUT_MS/],
  ];
  for (const [name, env, pattern] of bad) {
    it(`refuses ${name}`, function () {
      expect(() => loadConfig(env)).to.throw(ConfigError, pattern);
    });
  }
});
