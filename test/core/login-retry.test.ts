import { expect } from 'chai';
import { LoginProcessor } from '../../src/auth/login.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/observability/logger.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { waitReady } from '../../src/redis/connection.js';
import { createServices, type Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { TEST_JWT_SECRET } from './support.js';

/**
 * BullMQ runs a job again when an attempt fails after its login was made (a Redis blip while
 * queueing the reply, a worker killed mid-job). The retry carries the same nonce and must find
 * its own login again, never answer "unknown code".
 */
describe('core: an inbound job run again after its login', function () {
  let services: Services;
  let logins: LoginProcessor;
  before(async function () {
    const config = loadConfig({ KEY_PREFIX: uniquePrefix('core-retry'), REDIS_URL, JWT_SECRET: TEST_JWT_SECRET });
    services = createServices(config, createLogger({ level: 'error', production: false, role: 'test', instance: 'test' }), 'test');
    logins = new LoginProcessor(services.scripts, services.keys, services.tokens, config.verifiedGraceSeconds);
    await waitReady(services.redis, 5000);
  });
  after(async function () {
    await services?.close();
    if (services) await cleanPrefix(services.keys.prefix);
  });

  const jobFor = (emoji: string, nonce = randomPin()): InboundJob => ({
    message: { provider: 'evolution', id: randomPin().slice(4), phone: randomPhone(), text: `PIN: ${emoji}`, displayName: 'Re Try' },
    nonce,
    receivedAt: Date.now(),
  });

  /** A pending registration and the first run of the job that logs it in. */
  const firstRun = async () => {
    const pin = randomPin();
    const emoji = randomEmoji();
    await services.registrations.register(pin, emoji);
    const job = jobFor(emoji);
    const first = await logins.process(job);
    expect(first.outcome).to.equal('logged-in');
    return { pin, emoji, job, first };
  };

  it('a retry before the result is collected hands out the same login again', async function () {
    const { pin, job, first } = await firstRun();
    const retry = await logins.process(job);
    expect(retry.outcome).to.equal('logged-in');
    if (first.outcome === 'logged-in' && retry.outcome === 'logged-in') expect(retry.result).to.deep.equal(first.result);
    expect((await services.registrations.check(pin)).state).to.equal('verified');
  });

  it('a retry after the result was collected is already done, not an unknown code', async function () {
    const { pin, job } = await firstRun();
    expect((await services.registrations.check(pin)).state).to.equal('verified');
    expect((await logins.process(job)).outcome).to.equal('already-done');
  });

  it('a retry never claims a new registration of the same PIN and emoji string', async function () {
    const { pin, emoji, job } = await firstRun();
    expect((await services.registrations.check(pin)).state).to.equal('verified');
    expect((await services.registrations.register(pin, emoji)).created).to.equal(true);
    expect((await logins.process(job)).outcome).to.equal('already-done');
    expect((await services.registrations.check(pin)).state).to.equal('pending');
  });

  it('another delivery of the same message (new nonce) is a duplicate', async function () {
    const { job } = await firstRun();
    expect((await logins.process({ ...job, nonce: randomPin() })).outcome).to.equal('duplicate');
  });
});
