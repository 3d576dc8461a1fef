import { expect } from 'chai';
import { request, type JsonResponse } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { ADMIN, ADMIN_AUTH, basic } from './support.js';

const MAX_FAILURES = 5;

/**
 * Guessing the operator credentials: wrong ones are counted per IP group across every web node;
 * past the budget the group gets 429 with Retry-After, even with the right password; each failure
 * is a warn line with the group, and a success after failures is noted.
 */
describe('ops: admin and metrics logins are rate-limited per IP group', function () {
  this.timeout(60000);
  let stack: InProcessStack;
  before(async function () {
    stack = await startStack({
      inProcess: true,
      name: 'ops-admin-throttle',
      webs: 2,
      workers: 0,
      env: { ...ADMIN, RATE_ADMIN_FAILURES_PER_15_MINUTES: String(MAX_FAILURES) },
    });
  });
  after(async function () {
    await stack?.stop();
  });

  const dashboard = (base: string, authorization?: string): Promise<JsonResponse> =>
    request(base, 'GET', '/admin/queues/api/queues', { headers: authorization ? { authorization } : {} });
  const logLines = (pattern: RegExp): string[] => stack.webs.flatMap((w) => w.output().split('\n')).filter((l) => pattern.test(l));

  it('a few wrong passwords, then the right one: 401s, warn lines with the IP group, the success noted', async function () {
    for (let i = 0; i < 3; i++) expect((await dashboard(stack.url, basic(ADMIN.ADMIN_USER, `guess-${i}`))).status).to.equal(401);
    // no Authorization header at all (a browser's first visit) is not a guess
    expect((await dashboard(stack.url)).status).to.equal(401);
    expect((await dashboard(stack.url, ADMIN_AUTH)).status).to.equal(200);
    const failed = logLines(/warn: admin login failed/);
    expect(failed, failed.join('\n')).to.have.length(3);
    for (const l of failed) expect(l).to.match(/"ipGroup":"127\.0\.0\.1"/);
    expect(logLines(/warn: admin login succeeded after failures.*"failures":3/)).to.have.length(1);
  });

  it('brute force from one IP: 5 wrong tries, then 429 with Retry-After on every node, right password included', async function () {
    const tried: number[] = [];
    // 300 guesses, 20 at a time, spread over both web nodes (the count lives in Redis)
    for (let batch = 0; batch < 15; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => dashboard(stack.webs[i % 2]!.url, basic(ADMIN.ADMIN_USER, `brute-${batch}-${i}`))),
      );
      tried.push(...answers.map((a) => a.status));
    }
    const unauthorized = tried.filter((s) => s === 401).length;
    const limited = tried.filter((s) => s === 429).length;
    expect(unauthorized + limited).to.equal(tried.length);
    // concurrent guesses may each pass the check before the count is spent: a batch at most
    expect(unauthorized).to.be.within(MAX_FAILURES, MAX_FAILURES + 20);
    expect(limited).to.be.at.least(tried.length - MAX_FAILURES - 20);

    for (const base of stack.webs.map((w) => w.url)) {
      const right = await dashboard(base, ADMIN_AUTH);
      expect(right.status, right.text).to.equal(429);
      expect(right.body).to.include({ success: false, error: 'RATE_LIMITED' });
      expect(Number(right.headers.get('retry-after'))).to.be.within(1, 900);
      // the /metrics token shares the budget
      const metrics = await request(base, 'GET', '/metrics', { headers: { authorization: `Bearer ${ADMIN.METRICS_TOKEN}` } });
      expect(metrics.status).to.equal(429);
    }
    expect(logLines(/warn: admin login failed/).length).to.equal(3 + unauthorized);
    expect(logLines(/warn: admin login refused: too many failures/).length).to.be.at.least(limited);
    // eslint-disable-next-line no-console
    console.log(`      admin guesses: ${tried.length}, answered 401: ${unauthorized}, 429: ${limited}`);
  });
});
