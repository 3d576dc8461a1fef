import { expect } from 'chai';
import type { Queue } from 'bullmq';
import { cloudMessage, evolutionMessage } from '../helpers/gateway.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { againWhileUnavailable, post } from '../helpers/http.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { testRedis } from '../helpers/redis.js';
import { evolutionJwt, inBatches, jobCounts, postWebhook, queueOf, settled, sign } from './support.js';

const SECRET = 'burst-meta-secret';
const JWT_KEY = 'burst-evolution-key';
const TOTAL = 2000;
const LOGINS = 100;
const IN_FLIGHT = 50;

describe('messaging: a burst of 2,000 webhooks across two web nodes', function () {
  let stack: InProcessStack;
  let inbound: Queue;

  before(async function () {
    this.timeout(120000);
    stack = await startStack({
      inProcess: true,
      name: 'burst',
      webs: 2,
      workers: 1,
      env: { WEBHOOK_SECRET: SECRET, WEBHOOK_JWT_KEY: JWT_KEY, CHAT_REPLIES: 'false' },
    });
    inbound = queueOf(stack.prefix, 'inbound');
  });
  after(async function () {
    this.timeout(30000);
    await inbound?.close();
    await stack?.stop();
  });

  it('answers every one 200 and processes each message exactly once, redeliveries included', async function () {
    this.timeout(90000);
    const registrations = await inBatches(Array.from({ length: LOGINS }), 20, async () => {
      const pin = randomPin();
      const emoji = randomEmoji(8);
      const r = await post(stack.url, '/register-pin', { pin, emojiString: emoji });
      expect(r.status, r.text).to.equal(200);
      return { pin, emoji };
    });
    // half Evolution (JWT), half Cloud API (signature); the first LOGINS carry a registered code
    const bodies = Array.from({ length: TOTAL }, (_, i) => {
      const text = `PIN: ${i < LOGINS ? registrations[i]!.emoji : randomEmoji(8)}`;
      const phone = randomPhone();
      return i % 2 === 0
        ? { raw: JSON.stringify(evolutionMessage({ text, phone, id: `BURST${i}` })), auth: 'jwt' as const }
        : { raw: JSON.stringify(cloudMessage({ text, phone, id: `wamid.BURST${i}` })), auth: 'hmac' as const };
    });
    const token = evolutionJwt(JWT_KEY);
    // a 503 (Redis past its timeout under load) is delivered again, as gateways do
    const deliver = (b: (typeof bodies)[number], node: number) =>
      againWhileUnavailable(() =>
        postWebhook(stack.webs[node]!.url, b.raw, b.auth === 'jwt' ? { authorization: `Bearer ${token}` } : { 'x-hub-signature-256': sign(b.raw, SECRET) }),
      );

    const statuses = await inBatches(bodies, IN_FLIGHT, async (b, i) => (await deliver(b, i % 2)).status);
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    // the gateway delivers some of them again, to the other node
    const again = await inBatches(bodies.slice(0, 200), IN_FLIGHT, async (b, i) => (await deliver(b, (i + 1) % 2)).status);
    expect(again.filter((s) => s !== 200)).to.deep.equal([]);

    const counts = await settled(inbound, 60000);
    expect(counts).to.include({ completed: TOTAL, failed: 0 });
    const outcomes: Record<string, number> = {};
    for (const job of await inbound.getCompleted(0, TOTAL)) outcomes[String(job.returnvalue)] = (outcomes[String(job.returnvalue)] ?? 0) + 1;
    expect(outcomes).to.deep.equal({ 'logged-in': LOGINS, 'no-match': TOTAL - LOGINS });

    // every message id remembered once, every registered PIN verified exactly once
    const redis = testRedis();
    try {
      let seen = 0;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.prefix}:msg:*`, 'COUNT', 1000);
        cursor = next;
        seen += keys.length;
      } while (cursor !== '0');
      expect(seen).to.equal(TOTAL);
    } finally {
      redis.disconnect();
    }
    const checks = await inBatches(registrations, 20, async ({ pin }) => (await post<LoginBody>(stack.url, '/check-login', { pin })).body.verified);
    expect(checks.every((v) => v === true)).to.equal(true);
    expect((await jobCounts(inbound)).total).to.equal(TOTAL);
  });
});
