import { expect } from 'chai';
import { eventually, request } from '../helpers/http.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { startProcess, stopProcess, type ServiceProcess } from '../helpers/processes.js';
import { ADMIN, ADMIN_AUTH } from './support.js';

describe('ops: operator pages and shutdown while Redis is down', function () {
  let redis: PrivateRedis | undefined;
  let web: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  after(async function () {
    this.timeout(30000);
    await Promise.all([web, worker].filter((p) => p !== undefined).map((p) => stopProcess(p)));
    await redis?.kill();
  });

  it('/metrics and the dashboard answer 503; web and worker still stop with exit 0', async function () {
    this.timeout(30000);
    redis = await PrivateRedis.start();
    const env = { ...ADMIN, REDIS_URL: redis.url, KEY_PREFIX: 'test-ops-redis-down', SHUTDOWN_TIMEOUT_MS: '1500' };
    [web, worker] = await Promise.all([startProcess('web', env), startProcess('worker', env)]);
    expect((await request(web.url, 'GET', '/metrics', { headers: { authorization: ADMIN_AUTH } })).status).to.equal(200);
    await redis.kill();
    const metrics = await eventually(
      async () => {
        const r = await request(web!.url, 'GET', '/metrics', { headers: { authorization: ADMIN_AUTH } });
        return r.status === 200 ? undefined : r;
      },
      10000,
      200,
    );
    expect(metrics.status).to.equal(503);
    expect(metrics.body).to.include({ success: false, error: 'NETWORK_ERROR' });
    const api = await request(web.url, 'GET', '/admin/queues/api/queues', { headers: { authorization: ADMIN_AUTH } });
    expect(api.status, api.text).to.equal(503);
    expect(api.body).to.include({ success: false, error: 'NETWORK_ERROR' });
    expect(await stopProcess(web)).to.equal(0);
    expect(await stopProcess(worker)).to.equal(0);
  });
});
