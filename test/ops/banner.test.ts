import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { redisAddress } from '../../src/bin/banner.js';
import { eventually } from '../helpers/http.js';
import { freePort, startProcess, stopProcess } from '../helpers/processes.js';
import { cleanPrefix, uniquePrefix } from '../helpers/redis.js';

describe('ops: start-up banner', function () {
  this.timeout(40000);

  it('shows a Redis address without its credentials', function () {
    expect(redisAddress('rediss://user:s3cret@redis.example.com:6380/2')).to.equal('rediss://redis.example.com:6380/2');
    expect(redisAddress('redis://:s3cret@10.0.0.5')).to.equal('redis://10.0.0.5:6379');
  });

  it("a worker's banner lists only what it runs: no URL, dashboard or login page", async function () {
    const prefix = uniquePrefix('banner-worker');
    const worker = await startProcess('worker', { KEY_PREFIX: prefix, ADMIN_USER: 'admin', ADMIN_PASSWORD: 'pw-for-the-banner-test' });
    try {
      await worker.waitForOutput(/key prefix/);
      const banner = worker.output().slice(worker.output().indexOf('pin-auth started'));
      expect(banner).to.match(/roles +worker/);
      expect(banner).to.not.match(/URL|dashboard|login page|admin\/queues/);
    } finally {
      await stopProcess(worker);
      await cleanPrefix(prefix);
    }
  });

  it('warns that the webhook is open only when no webhook method is set (WEBHOOK_BEARER_KEY is one)', async function () {
    const OPEN = /anyone who can reach the webhook can sign in as anyone/;
    const prefix = uniquePrefix('banner-hook');
    const start = (env: Record<string, string>) => startProcess('web', { KEY_PREFIX: prefix, ...env });
    const [keyed, open] = await Promise.all([start({ WEBHOOK_BEARER_KEY: 'a-bearer-key-of-enough-length' }), start({})]);
    try {
      await Promise.all([keyed.waitForOutput(/key prefix/), open.waitForOutput(/key prefix/)]);
      expect(keyed.output()).not.to.match(OPEN);
      expect(open.output()).to.match(OPEN);
    } finally {
      await Promise.all([stopProcess(keyed), stopProcess(open)]);
      await cleanPrefix(prefix);
    }
  });

  it('prints URL, roles, provider, Redis host (no password), dashboard and key prefix', async function () {
    // a password-protected Redis of the test's own, so the banner has a password to leave out
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--requirepass', 'b4nner-secret'], { stdio: 'ignore' });
    const prefix = uniquePrefix('banner');
    try {
      await eventually(async () => {
        const probe = new Redis({ port, password: 'b4nner-secret', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on('error', () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG' ? true : undefined;
        } finally {
          probe.disconnect();
        }
      });
      const web = await startProcess('all', {
        KEY_PREFIX: prefix,
        REDIS_URL: `redis://:b4nner-secret@127.0.0.1:${port}`,
        ADMIN_USER: 'admin',
        ADMIN_PASSWORD: 'pw-for-the-banner-test',
        MESSAGING_PROVIDER: 'log',
      });
      try {
        await web.waitForOutput(/key prefix/);
        const out = web.output();
        expect(out).to.match(new RegExp(`URL +http://localhost:${web.port}`));
        expect(out).to.match(/roles +web, worker/);
        expect(out).to.match(/provider +log/);
        expect(out).to.match(new RegExp(`redis +redis://127\\.0\\.0\\.1:${port}`));
        expect(out).to.match(/dashboard +on at \/admin\/queues/);
        expect(out).to.match(new RegExp(`key prefix +${prefix}`));
        expect(out).not.to.include('b4nner-secret');
        expect(out).not.to.include('pw-for-the-banner-test');
      } finally {
        await stopProcess(web);
      }
    } finally {
      server.kill('SIGTERM');
    }
  });
});
