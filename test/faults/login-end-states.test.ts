import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { messageKey } from '../../src/messaging/inbound.js';
import { inboundJobId } from '../../src/queues/intake.js';
import { createLogger } from '../../src/observability/logger.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { endFailedLogin } from '../../src/queues/workers/inbound.js';
import { Notifier } from '../../src/realtime/notifier.js';
import { waitReady } from '../../src/redis/connection.js';
import { createServices, type Services } from '../../src/services.js';
import { scriptRequest } from '../helpers/fault-proxy.js';
import { randomEmoji, randomPin, sendChat } from '../helpers/flow.js';
import { eventually, get, post } from '../helpers/http.js';
import { expectError, stackQueue } from '../core/support.js';
import { connected, type TestClient } from '../realtime/clients.js';
import { startFaultStack, type FaultStack } from './support.js';

interface Ack {
  success: boolean;
  error?: string;
}

/**
 * Logins that end without being collected end in a state the client sees: a login job that
 * fails for good after claiming its registration answers 410 LOGIN_FAILED (socket `pin-error`)
 * and its session is closed; cancelling a verified, uncollected login closes its session.
 */
describe('faults: a failed or cancelled login ends cleanly', function () {
  this.timeout(60000);
  let f: FaultStack;
  let services: Services;
  const sockets: TestClient[] = [];
  before(async function () {
    f = await startFaultStack('faults-end-states');
    // the test's own view of the deployment, straight to Redis (same prefix and secret)
    const config = loadConfig({ KEY_PREFIX: f.stack.prefix, REDIS_URL: f.redis.url });
    services = createServices(config, createLogger({ level: 'error', production: false, role: 'test', instance: 'test' }), 'test');
    await waitReady(services.redis, 5000);
  });
  after(async function () {
    for (const s of sockets) s.close();
    await services?.close();
    await f?.stop();
  });

  const socketRegistration = async (pin: string, emojiString: string): Promise<TestClient> => {
    const c = await connected(f.stack.url);
    sockets.push(c);
    const ack = await c.socket.emitWithAck('register-pin', { pin, emojiString });
    expect(ack, JSON.stringify(ack)).to.include({ success: true });
    return c;
  };

  it('a login job failing for good after its claim: 410 LOGIN_FAILED, pin-error, session closed, the PIN can start again', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const c = await socketRegistration(pin, emoji);
    const rawId = `FAIL${Date.now()}`;
    // the worker claims the registration; its connection drops as it sends complete-login
    const dropped = f.proxy.dropRequest(scriptRequest('complete-login'));
    expect((await sendChat(f.stack.url, `PIN: ${emoji}`, { id: rawId })).status).to.equal(200);
    await dropped;
    // ... and the worker dies before any retry: the job will never complete
    const worker = f.stack.workers[0]!;
    worker.child.kill('SIGKILL');
    await worker.exited;
    f.stack.workers.splice(0, 1);

    const pinHash = services.registrations.pinKey(pin);
    const reg = await services.redis.hgetall(services.keys.registration(pinHash));
    expect(reg.state, 'claimed, not completed').to.equal('claimed');
    expect(await services.redis.exists(services.keys.session(reg.userId!, reg.sessionId!))).to.equal(1);
    const pendingCheck = await post(f.stack.url, '/check-login', { pin });
    expect(pendingCheck.body).to.include({ success: true, verified: false });

    // what the worker does when the job's last attempt fails
    const queue = stackQueue(f.stack.prefix, 'inbound', f.redis.url);
    const job = await queue.getJob(inboundJobId(messageKey('evolution', 'test-instance', rawId)));
    await queue.close();
    expect(job, 'the inbound job').to.not.equal(undefined);
    const ended = await endFailedLogin(services, Notifier.classic(services.redis, services.keys.socketChannel()), job!.data as InboundJob);
    expect(ended).to.equal(true);

    const error = await c.next<{ error: string; message: string }>('pin-error');
    expect(error.error).to.equal('LOGIN_FAILED');
    expectError(await post(f.stack.url, '/check-login', { pin }), 410, 'LOGIN_FAILED');
    expect(await services.redis.exists(services.keys.session(reg.u!, reg.d!)), 'the session of the claim').to.equal(0);
    // a second call finds nothing to end
    expect(await endFailedLogin(services, Notifier.classic(services.redis, services.keys.socketChannel()), job!.data as InboundJob)).to.equal(false);
    // the client starts again with the same PIN
    const again = await post(f.stack.url, '/register-pin', { pin, emojiString: randomEmoji() });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.pinId).to.not.equal(reg.i);
    await f.stack.addWorker();
  });

  it('cancel-auth of a verified, uncollected login closes its session; after collection it changes nothing', async function () {
    const pin = randomPin();
    const emoji = randomEmoji();
    const c = await socketRegistration(pin, emoji);
    expect((await sendChat(f.stack.url, `PIN: ${emoji}`)).status).to.equal(200);
    const success = await c.next<{ token: string }>('auth-success', 15000);
    expect((await get(f.stack.url, '/profile', success.token)).status).to.equal(200);
    const ack = (await c.socket.emitWithAck('cancel-auth', { pin })) as Ack;
    expect(ack.success, JSON.stringify(ack)).to.equal(true);
    expectError(await get(f.stack.url, '/profile', success.token), 401, 'AUTHENTICATION_FAILED');
    expectError(await post(f.stack.url, '/check-login', { pin }), 404, 'PIN_NOT_FOUND');

    // collected over HTTP, then cancelled: the session belongs to the client, it stays open
    const pin2 = randomPin();
    const emoji2 = randomEmoji();
    expect((await post(f.stack.url, '/register-pin', { pin: pin2, emojiString: emoji2 })).status).to.equal(200);
    expect((await sendChat(f.stack.url, `PIN: ${emoji2}`)).status).to.equal(200);
    const login = await eventually(async () => {
      const r = await post<{ verified: boolean; token: string }>(f.stack.url, '/check-login', { pin: pin2 });
      return r.body.verified ? r.body : undefined;
    });
    const late = (await c.socket.emitWithAck('cancel-auth', { pin: pin2 })) as Ack;
    expect(late).to.include({ success: false, error: 'PIN_NOT_FOUND' });
    expect((await get(f.stack.url, '/profile', login.token)).status).to.equal(200);
  });
});
