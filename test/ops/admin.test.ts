import { expect } from 'chai';
import { io as connect, type Socket } from 'socket.io-client';
import { againWhileUnavailable, eventually, request } from '../helpers/http.js';
import { startStack, type InProcessNode, type InProcessStack } from '../helpers/processes.js';
import { ADMIN, ADMIN_AUTH, basic, collectLogin, postChat, registerPin, sample, scrape } from './support.js';

const SECRET = 'webhook-secret-for-the-second-node';

describe('ops: queue dashboard and /metrics', function () {
  let stack: InProcessStack;
  let base: string;
  let signedWeb: InProcessNode;
  let closedWeb: InProcessNode;
  let tokenWeb: InProcessNode;
  const TOKEN_ONLY = 'scrape-only-token-5d1e';
  let socket: Socket | undefined;

  before(async function () {
    this.timeout(120000);
    stack = await startStack({ inProcess: true, name: 'ops-admin', webs: 0, workers: 0, env: { ...ADMIN, METRICS_INTERVAL_MS: '200', PIN_TTL_SECONDS: '4' } });
    await Promise.all([
      stack.addWeb({ INSTANCE_NAME: 'web-a' }).then((w) => (base = w.url)),
      stack.addWorker({ INSTANCE_NAME: 'worker-a' }),
      // a second web node that checks webhook signatures, and one with no admin password
      stack.addWeb({ INSTANCE_NAME: 'web-signed', WEBHOOK_SECRET: SECRET }).then((w) => (signedWeb = w)),
      stack.addWeb({ INSTANCE_NAME: 'web-closed', ADMIN_PASSWORD: '', METRICS_TOKEN: '' }).then((w) => (closedWeb = w)),
      stack.addWeb({ INSTANCE_NAME: 'web-token', ADMIN_PASSWORD: '', METRICS_TOKEN: TOKEN_ONLY }).then((w) => (tokenWeb = w)),
    ]);
  });
  after(async function () {
    this.timeout(30000);
    socket?.close();
    await stack?.stop();
  });

  it('answers 404 for both pages when no ADMIN_PASSWORD is set', async function () {
    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/metrics']) {
      const r = await request(closedWeb.url, 'GET', path, { headers: { authorization: ADMIN_AUTH } });
      expect(r.status, path).to.equal(404);
      expect(r.body).to.include({ success: false, error: 'NOT_FOUND' });
    }
  });

  it('with only METRICS_TOKEN set: /metrics takes the bearer token, the dashboard stays 404', async function () {
    expect((await request(tokenWeb.url, 'GET', '/admin/queues', { headers: { authorization: ADMIN_AUTH } })).status).to.equal(404);
    const without = await request(tokenWeb.url, 'GET', '/metrics', { headers: { authorization: ADMIN_AUTH } });
    expect(without.status).to.equal(401);
    expect(without.body).to.include({ success: false, error: 'AUTHENTICATION_FAILED' });
    const withToken = await request(tokenWeb.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN_ONLY}` } });
    expect(withToken.status).to.equal(200);
    expect(withToken.text).to.match(/pinauth_http_request_duration_seconds/);
  });

  it('asks for basic auth (401, WWW-Authenticate) without the right credentials', async function () {
    const wrong = [undefined, basic(ADMIN.ADMIN_USER, 'nope'), basic('someone', ADMIN.ADMIN_PASSWORD), 'Basic !!!', `Bearer ${ADMIN.METRICS_TOKEN}`];
    for (const authorization of wrong) {
      const r = await request(base, 'GET', '/admin/queues', { headers: authorization ? { authorization } : {} });
      expect(r.status, String(authorization)).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.match(/^Basic realm="[^"]+"/);
      expect(r.body).to.include({ success: false, error: 'AUTHENTICATION_FAILED' });
    }
    const metrics = await request(base, 'GET', '/metrics', { headers: { authorization: 'Bearer wrong-token' } });
    expect(metrics.status).to.equal(401);
    expect(metrics.headers.get('www-authenticate')).to.match(/^Basic /);
  });

  it('serves Bull Board over every queue to the admin', async function () {
    const page = await request(base, 'GET', '/admin/queues', { headers: { authorization: ADMIN_AUTH } });
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    const api = await request<{ queues: { name: string }[] }>(base, 'GET', '/admin/queues/api/queues', { headers: { authorization: ADMIN_AUTH } });
    expect(api.status).to.equal(200);
    expect(api.body.queues.map((q) => q.name).sort()).to.deep.equal(['expiry', 'inbound', 'outbound']);
  });

  it('refuses dashboard actions a foreign page could forge (forms, other origins), allows its own', async function () {
    const add = '/admin/queues/api/queues/inbound/add';
    const form = 'name=message&data[message][provider]=evolution&data[message][phone]=%2B15550001111';
    const forged: { raw: string; headers: Record<string, string> }[] = [
      { raw: form, headers: { authorization: ADMIN_AUTH, 'content-type': 'application/x-www-form-urlencoded' } },
      { raw: '{"name":"message","data":{}}', headers: { authorization: ADMIN_AUTH, 'content-type': 'text/plain' } },
      { raw: '{"name":"message","data":{}}', headers: { authorization: ADMIN_AUTH, 'content-type': 'application/json', origin: 'https://evil.example' } },
      { raw: '{"name":"message","data":{}}', headers: { authorization: ADMIN_AUTH, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' } },
    ];
    for (const req of forged) {
      const r = await againWhileUnavailable(() => request(base, 'POST', add, req));
      expect(r.status, JSON.stringify(req.headers)).to.equal(403);
      expect(r.body).to.include({ success: false, error: 'FORBIDDEN' });
    }
    const counts = await request<{ queues: { name: string; counts: Record<string, number> }[] }>(base, 'GET', '/admin/queues/api/queues', {
      headers: { authorization: ADMIN_AUTH },
    });
    const inbound = counts.body.queues.find((q) => q.name === 'inbound')!;
    expect(Object.values(inbound.counts).reduce((a, b) => a + b, 0)).to.equal(0);
    const own = await request(base, 'PUT', '/admin/queues/api/queues/expiry/clean/failed', {
      headers: { authorization: ADMIN_AUTH, origin: base, 'sec-fetch-site': 'same-origin' },
    });
    expect(own.status, own.text).to.equal(200);
  });

  it('reports every node and the cluster in Prometheus text, with bounded labels', async function () {
    this.timeout(30000);
    // one login, one expiry, one rejected signature, one ignored event, one unknown path, one socket
    await registerPin(base); // left to expire (PIN_TTL_SECONDS=4)
    const login = await registerPin(base);
    const hook = await postChat(base, `PIN: ${login.emoji}`);
    expect(hook.status, hook.text).to.equal(200);
    await collectLogin(base, login.pin);
    expect((await postChat(signedWeb.url, 'PIN: 🍎', { secret: 'not-the-secret' })).status).to.equal(401);
    expect((await postChat(base, 'hello', { fromMe: true })).status).to.equal(200);
    expect((await request(base, 'GET', '/no/such/path-7f3a9c')).status).to.equal(404);
    socket = connect(base, { transports: ['websocket'], forceNew: true });
    await new Promise<void>((resolve) => socket!.on('connect', () => resolve()));

    const text = await eventually(
      async () => {
        const t = await scrape(base, `Bearer ${ADMIN.METRICS_TOKEN}`);
        const ready =
          sample(t, 'pinauth_logins_total', { node: 'worker-a' }) === 1 &&
          sample(t, 'pinauth_pin_expiries_total', { node: 'worker-a' }) === 1 &&
          sample(t, 'pinauth_webhook_rejected_total', { node: 'web-signed' }) === 1 &&
          // the sweep of the logged-in PIN's expiry second may come a second after the other's
          sample(t, 'pinauth_queue_jobs', { queue: 'expiry', state: 'delayed' }) === 0;
        return ready ? t : undefined;
      },
      15000,
      200,
    );

    expect(sample(text, 'pinauth_webhook_to_login_seconds_count', { node: 'worker-a' })).to.equal(1);
    expect(sample(text, 'pinauth_inbound_messages_total', { outcome: 'logged-in' })).to.equal(1);
    expect(sample(text, 'pinauth_jobs_total', { queue: 'inbound', result: 'completed' })).to.equal(1);
    expect(sample(text, 'pinauth_webhook_ignored_events_total', { node: 'web-a', reason: 'from-me' })).to.equal(1);
    expect(sample(text, 'pinauth_http_request_duration_seconds_count', { node: 'web-a', route: '/register-pin', method: 'POST', status: '200' })).to.equal(2);
    expect(sample(text, 'pinauth_http_request_duration_seconds_count', { node: 'web-a', route: 'unmatched', status: '404' })).to.equal(1);
    expect(text).not.to.include('path-7f3a9c');
    expect(sample(text, 'pinauth_socket_connections', { node: 'web-a' })).to.equal(1);
    expect(sample(text, 'pinauth_queue_jobs', { queue: 'inbound', state: 'completed' })).to.equal(1);
    expect(sample(text, 'pinauth_queue_jobs', { queue: 'expiry', state: 'delayed' })).to.equal(0);
    expect(sample(text, 'pinauth_active_pins')).to.equal(0);
    expect(text).to.match(/^# TYPE pinauth_webhook_to_login_seconds histogram$/m);
    expect(text).to.match(/^process_cpu_seconds_total\{node="worker-a"\} /m);
  });
});
