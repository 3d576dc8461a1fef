import { randomBytes } from 'node:crypto';
import { UnrecoverableError, Worker } from 'bullmq';
import { expect } from 'chai';
import { evolutionMessage, outboundOf, startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { randomPhone, type LoginBody } from '../helpers/flow.js';
import { runNode, startStack, type Stack } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/redis.js';
import { collectLogin, postChat, registerPin } from '../ops/support.js';
import { connected } from '../realtime/clients.js';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { createQueues, type Queues } from '../../src/queues/queues.js';
import { inboundJobId } from '../../src/queues/intake.js';
import type { InboundJob } from '../../src/queues/jobs.js';
import { keys } from '../../src/redis/keys.js';

/**
 * Chat answers and commands bound to what they answer (issue 48), production settings with the
 * chat confirmation on (two web nodes, a worker, real Redis, a mock Evolution API): a YES
 * answers only a question asked before it arrived (a lured code and YES sent at once, an old
 * YES that failed for good replayed by `npm run replay-inbound`), and STOP from a recycled number's newcomer acts on the
 * newcomer's account alone.
 */
const SECRET = 'binding-suite-webhook-secret-of-32-bytes!';
const digits = (phone: string): string => phone.replace(/^\+/, '');
const ENV: Record<string, string> = {
  NODE_ENV: 'production',
  JWT_SECRET: 'binding-suite-jwt-secret-0123456789abcdefgh',
  WEBHOOK_SECRET: SECRET,
  LOGIN_CONFIRMATION: 'on',
  APP_NAME: 'Acme Bank',
  MESSAGING_PROVIDER: 'evolution',
  EVOLUTION_API_URL: 'http://127.0.0.1:9',
  EVOLUTION_API_KEY: 'evo-key',
  EVOLUTION_INSTANCE: 'test-instance',
};
const newLid = (): string => String(1e14 + Math.floor(Math.random() * 8e14));

describe("security: chat answers bound to their question, commands to the sender's account", function () {
  this.timeout(60000);
  let stack: Stack;
  let gw: MockGateway;
  let queues: Queues;

  before(async function () {
    this.timeout(60000);
    gw = await startMockGateway();
    stack = await startStack({
      name: 'sec-binding',
      webs: 2,
      workers: 1,
      env: { ...ENV, EVOLUTION_API_URL: gw.url },
    });
    const url = new URL(REDIS_URL);
    queues = createQueues({ host: url.hostname, port: Number(url.port || 6379) }, keys(stack.prefix).queuePrefix, 1);
  });
  after(async function () {
    this.timeout(60000);
    await queues?.close();
    await stack?.stop();
    await gw?.close();
  });

  const say = async (phone: string, text: string): Promise<void> => {
    expect((await postChat(stack.webs[1]!.url, text, { phone, secret: SECRET })).status).to.equal(200);
  };
  const textsTo = (to: string): string[] =>
    gw.requests
      .map(outboundOf)
      .filter((o) => o.to === to)
      .map((o) => o.text ?? '');
  const waitText = (to: string, pattern: RegExp, after = 0): Promise<string> =>
    eventually(
      async () =>
        textsTo(to)
          .slice(after)
          .find((t) => pattern.test(t)),
      15000,
      50,
    );
  const numberOf = (question: string): string => /Reply YES (\d{2}) to sign in/.exec(question)![1]!;
  const check = (pin: string) => post(stack.webs[1]!.url, '/check-login', { pin });

  /** A chat message put on the inbound queue as its webhook accepted it at `receivedAt` (what replay-inbound puts back: the job as it was). */
  async function acceptedAt(phone: string, text: string, receivedAt: number): Promise<void> {
    const id = randomBytes(10).toString('hex');
    const job: InboundJob = {
      message: { provider: 'evolution', id, channel: 'evolution:test-instance', phone, text, displayName: 'Test Person' },
      nonce: `test-${id}`,
      receivedAt,
    };
    await queues.inboundFor(id).add('message', job, { jobId: inboundJobId(id) });
  }

  it("a lured code and its YES sent at once confirm nothing, even naming the question's number", async function () {
    const phone = randomPhone();
    const lured = await registerPin(stack.webs[0]!.url);
    const sentAt = Date.now();
    await say(phone, `PIN: ${lured.emoji}`);
    const n = numberOf(await waitText(digits(phone), /^Sign in to /));
    // the YES and the bare YES the victim sent with the code, accepted with it
    const seen = textsTo(digits(phone)).length;
    await acceptedAt(phone, `YES ${n}`, sentAt);
    await acceptedAt(phone, 'YES', sentAt);
    await eventually(
      async () =>
        textsTo(digits(phone))
          .slice(seen)
          .filter((t) => /no sign-in waiting for your answer/.test(t)).length === 2
          ? true
          : undefined,
      15000,
      50,
    );
    expect((await check(lured.pin)).body).to.include({ verified: false, awaitingConfirmation: true });
    // the person's own answer, sent after reading the question, decides
    await say(phone, `YES ${n}`);
    expect((await collectLogin(stack.webs[0]!.url, lured.pin)).user.phone).to.equal(phone);
  });

  it("a PIN's question number can't be learnt beforehand: asked again of another phone, it is drawn anew", async function () {
    const pairs: Array<[string, string]> = [];
    const socket = await connected(stack.webs[0]!.url);
    try {
      for (let round = 0; round < 4; round++) {
        // the attacker's own phone is asked about its PIN, then the attacker cancels and
        // registers the same PIN again, for the victim's phone to be asked
        const reg = await registerPin(stack.webs[0]!.url);
        const [attacker, victim] = [randomPhone(), randomPhone()];
        await say(attacker, `PIN: ${reg.emoji}`);
        const learnt = numberOf(await waitText(digits(attacker), /^Sign in to /));
        await new Promise((resolve) => socket.socket.emit('cancel-auth', { pin: reg.pin }, resolve));
        const again = await post(stack.webs[0]!.url, '/register-pin', { pin: reg.pin });
        expect(again.status, again.text).to.equal(200);
        await say(victim, `PIN: ${String(again.body.emojiString)}`);
        pairs.push([learnt, numberOf(await waitText(digits(victim), /^Sign in to /))]);
      }
    } finally {
      socket.close();
    }
    // one in 90 alike by chance; four alike in a row, one in 6.6 × 10^7
    expect(
      pairs.some(([learnt, asked]) => learnt !== asked),
      JSON.stringify(pairs),
    ).to.equal(true);
  });

  it('an old YES that failed for good, replayed by replay-inbound after a newer question, confirms nothing', async function () {
    const phone = randomPhone();
    // the incident: the YES is accepted, and its job fails for good (the service's worker
    // stopped, one that fails every job in its place)
    const worker = stack.workers[0]!;
    worker.child.kill('SIGSTOP');
    const url = new URL(REDIS_URL);
    const queue = queues.inbound[0]!;
    const failing = new Worker<InboundJob>(queue.name, () => Promise.reject(new UnrecoverableError('incident')), {
      connection: { host: url.hostname, port: Number(url.port || 6379) },
      prefix: keys(stack.prefix).queuePrefix(queue.name),
    });
    try {
      const failed = new Promise<void>((resolve) => failing.on('failed', () => resolve()));
      await say(phone, 'YES');
      await failed;
    } finally {
      await failing.close();
      worker.child.kill('SIGCONT');
    }
    // a newer question, open when the job is replayed
    const reg = await registerPin(stack.webs[0]!.url);
    await say(phone, `PIN: ${reg.emoji}`);
    await waitText(digits(phone), /^Sign in to /);
    const before = textsTo(digits(phone)).length;
    const replay = await runNode(['dist/src/bin/replay-inbound.js'], { ...ENV, REDIS_URL, KEY_PREFIX: stack.prefix });
    expect(replay.code, replay.stderr).to.equal(0);
    expect(replay.stdout).to.match(/^1 in all$/m);
    await waitText(digits(phone), /no sign-in waiting for your answer/, before);
    expect((await check(reg.pin)).body).to.include({ verified: false, awaitingConfirmation: true });
  });

  it("STOP from a recycled number's new holder (another LID) leaves the owner's sessions, and tells nothing of them", async function () {
    const phone = randomPhone();
    const [ownerLid, newcomerLid] = [newLid(), newLid()];
    const chat = async (lid: string, text: string): Promise<void> => {
      const raw = JSON.stringify(evolutionMessage({ text, remoteJid: `${lid}@lid`, remoteJidAlt: `${digits(phone)}@s.whatsapp.net` }));
      const r = await request(stack.webs[1]!.url, 'POST', '/messaging-endpoint', {
        raw,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': WebhookAuth.sign(raw, SECRET) },
      });
      expect(r.status, r.text).to.equal(200);
    };
    const owner: LoginBody[] = [];
    for (let i = 0; i < 2; i++) {
      const reg = await registerPin(stack.webs[0]!.url);
      const seen = textsTo(digits(phone)).length;
      await chat(ownerLid, `PIN: ${reg.emoji}`);
      await waitText(digits(phone), /^Sign in to /, seen);
      await chat(ownerLid, 'YES');
      owner.push(await collectLogin(stack.webs[0]!.url, reg.pin));
    }
    expect(owner[1]!.user.id).to.equal(owner[0]!.user.id);

    // the number now in another person's hands: STOP from it, with its own LID
    const seen = textsTo(digits(phone)).length;
    await chat(newcomerLid, 'STOP');
    const reply = await waitText(digits(phone), /signed out/, seen);
    expect(reply).to.not.match(/\b2\b/);
    expect(reply).to.match(/\(0 sessions ended\)/);
    for (const login of owner) expect((await get(stack.url, '/profile', login.token)).status).to.equal(200);
    const listed = await get<{ sessions: unknown[] }>(stack.url, '/sessions', owner[0]!.token);
    expect(listed.body.sessions).to.have.length(2);

    // the owner's own STOP still ends them
    const before = textsTo(digits(phone)).length;
    await chat(ownerLid, 'STOP');
    expect(await waitText(digits(phone), /signed out/, before)).to.match(/\(2 sessions ended\)/);
    await eventually(async () => ((await get(stack.url, '/profile', owner[0]!.token)).status === 401 ? true : undefined), 15000, 100);
  });
});
