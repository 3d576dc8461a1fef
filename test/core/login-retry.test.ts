import { expect } from 'chai';
import { LoginProcessor } from '../../src/auth/login.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/observability/logger.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { waitReady } from '../../src/redis/connection.js';
import type { Caller } from '../../src/registrations/service.js';
import { createServices, type Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin } from '../helpers/flow.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';
import { TEST_JWT_SECRET } from './support.js';

const me: Caller = { ip: '127.0.0.1', via: 'http' };

// each twice: the claim as one script (one server) and one call per step (as on a cluster)
for (const stepwise of [false, true]) {
  const how = stepwise ? ' (claim one step per call)' : '';

  /**
   * BullMQ runs a job again when an attempt fails after its login was made (a Redis blip while
   * queueing the reply, a worker killed mid-job). The retry carries the same nonce and must find
   * its own login again, never answer "unknown code".
   */
  describe(`core: an inbound job run again after its login${how}`, function () {
    let services: Services;
    let logins: LoginProcessor;
    before(async function () {
      const config = loadConfig({ KEY_PREFIX: uniquePrefix('core-retry'), REDIS_URL, JWT_SECRET: TEST_JWT_SECRET });
      services = createServices(config, createLogger({ level: 'error', production: false, role: 'test', instance: 'test' }), 'test');
      logins = new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, {
        graceSeconds: config.verifiedGraceSeconds,
        confirm: false,
        stepwise,
      });
      await waitReady(services.redis, 5000);
      await services.ready();
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
      await services.registrations.register(pin, emoji, me);
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
      expect((await services.registrations.check(pin, me)).state).to.equal('verified');
    });

    it('a retry after the result was collected is already done, not an unknown code, and knows the session is open', async function () {
      const { pin, job } = await firstRun();
      expect((await services.registrations.check(pin, me)).state).to.equal('verified');
      expect(await logins.process(job)).to.deep.include({ outcome: 'already-done', signedIn: true });
    });

    it('a retry after the session it opened was closed is already done and not signed in', async function () {
      const { pin, job } = await firstRun();
      expect((await services.registrations.check(pin, me)).state).to.equal('verified');
      expect((await services.sessions.endAllOfSender([{ kind: 'phone', value: job.message.phone ?? '' }])).sessions).to.equal(1);
      expect(await logins.process(job)).to.deep.include({ outcome: 'already-done', signedIn: false });
    });

    it('a retry never claims a new registration of the same PIN and emoji string', async function () {
      const { pin, emoji, job } = await firstRun();
      expect((await services.registrations.check(pin, me)).state).to.equal('verified');
      expect((await services.registrations.register(pin, emoji, me)).created).to.equal(true);
      expect((await logins.process(job)).outcome).to.equal('already-done');
      expect((await services.registrations.check(pin, me)).state).to.equal('pending');
    });

    it('another delivery of the same message (new nonce) is a duplicate', async function () {
      const { job } = await firstRun();
      expect((await logins.process({ ...job, nonce: randomPin() })).outcome).to.equal('duplicate');
    });
  });

  describe(`core: retried jobs of a sign-in confirmed in the chat${how}`, function () {
    let services: Services;
    let logins: LoginProcessor;
    before(async function () {
      const config = loadConfig({ KEY_PREFIX: uniquePrefix('core-retry-confirm'), REDIS_URL, JWT_SECRET: TEST_JWT_SECRET, LOGIN_CONFIRMATION: 'on' });
      services = createServices(config, createLogger({ level: 'error', production: false, role: 'test', instance: 'test' }), 'test');
      logins = new LoginProcessor(services.scripts, services.keys, services.tokens, services.sessions, {
        graceSeconds: config.verifiedGraceSeconds,
        confirm: true,
        stepwise,
      });
      await waitReady(services.redis, 5000);
      await services.ready();
    });
    after(async function () {
      await services?.close();
      if (services) await cleanPrefix(services.keys.prefix);
    });

    const say = (phone: string, text: string): InboundJob => ({
      message: { provider: 'cloud', id: randomPin().slice(4), phone, text, displayName: 'Con Firm' },
      nonce: randomPin(),
      receivedAt: Date.now(),
    });
    const asked = async () => {
      const pin = randomPin();
      const emoji = randomEmoji();
      const phone = randomPhone();
      await services.registrations.register(pin, emoji, me);
      const code = say(phone, `PIN: ${emoji}`);
      expect((await logins.process(code)).outcome).to.equal('confirmation-asked');
      return { pin, emoji, phone, code };
    };

    it('a retried code job asks again; a retried YES hands out the same login; a redelivered YES is a duplicate', async function () {
      const { pin, phone, code } = await asked();
      expect((await logins.process(code)).outcome).to.equal('confirmation-asked');
      expect((await services.registrations.check(pin, me)).state).to.equal('awaiting');
      const yes = say(phone, 'yes');
      const first = await logins.process(yes);
      const retry = await logins.process(yes);
      expect(first.outcome).to.equal('logged-in');
      if (first.outcome === 'logged-in' && retry.outcome === 'logged-in') expect(retry.result).to.deep.equal(first.result);
      else expect.fail(`retry: ${retry.outcome}`);
      expect((await logins.process({ ...yes, nonce: randomPin() })).outcome).to.equal('duplicate');
      expect((await services.registrations.check(pin, me)).state).to.equal('verified');
    });

    it('a retried NO is denied again (announced again), and a YES after it finds nothing', async function () {
      const { pin, phone } = await asked();
      const no = say(phone, 'no');
      expect((await logins.process(no)).outcome).to.equal('denied');
      expect((await logins.process(no)).outcome).to.equal('denied');
      expect((await logins.process(say(phone, 'yes'))).outcome).to.equal('unanswered');
      try {
        await services.registrations.check(pin, me);
        expect.fail('check after NO');
      } catch (err) {
        expect((err as { code?: string }).code).to.equal('LOGIN_DENIED');
      }
    });

    it('cancel-auth withdraws the question: a later YES finds nothing', async function () {
      const { pin, phone } = await asked();
      await services.registrations.cancel(pin, me);
      expect((await logins.process(say(phone, 'yes'))).outcome).to.equal('unanswered');
    });
  });
}
