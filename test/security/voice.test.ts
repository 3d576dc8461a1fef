import { expect } from 'chai';
import { outboundOf, startMockGateway, type MockGateway } from '../helpers/gateway.js';
import { eventually, post } from '../helpers/http.js';
import { randomPhone, type LoginBody } from '../helpers/flow.js';
import { startStack, type InProcessStack } from '../helpers/processes.js';
import { collectLogin, postChat, registerPin } from '../ops/support.js';
import { expectError } from './expect-error.js';

/**
 * The service's voice is the service's, in production settings with the chat confirmation on
 * (two web nodes, a worker, a mock Evolution API): a signed-in user's /send-message can't pass
 * for the service's own question, and a YES answers exactly the question it was meant for.
 */
const SECRET = 'voice-suite-webhook-secret-of-32-bytes!!';
const APP = 'Acme Bank';
const digits = (phone: string): string => phone.replace(/^\+/, '');

describe("security: the service's voice (send-message, the chat question and its YES)", function () {
  this.timeout(60000);
  let stack: InProcessStack;
  let gw: MockGateway;

  before(async function () {
    this.timeout(60000);
    gw = await startMockGateway();
    stack = await startStack({
      inProcess: true,
      name: 'sec-voice',
      webs: 2,
      workers: 1,
      env: {
        NODE_ENV: 'production',
        JWT_SECRET: 'voice-suite-jwt-secret-0123456789abcdefgh',
        WEBHOOK_SECRET: SECRET,
        LOGIN_CONFIRMATION: 'on',
        APP_NAME: APP,
        MESSAGING_PROVIDER: 'evolution',
        EVOLUTION_API_URL: gw.url,
        EVOLUTION_API_KEY: 'evo-key',
        EVOLUTION_INSTANCE: 'test-instance',
      },
    });
  });
  after(async function () {
    this.timeout(60000);
    await stack?.stop();
    await gw?.close();
  });

  const say = async (phone: string, text: string, url = stack.webs[1]!.url): Promise<void> => {
    expect((await postChat(url, text, { phone, secret: SECRET })).status).to.equal(200);
  };
  const textsTo = (phone: string): string[] =>
    gw.requests
      .map(outboundOf)
      .filter((o) => o.to === digits(phone))
      .map((o) => o.text ?? '');
  const waitText = (phone: string, pattern: RegExp, after = 0): Promise<string> =>
    eventually(
      async () =>
        textsTo(phone)
          .slice(after)
          .find((t) => pattern.test(t)),
      15000,
      50,
    );

  /** A person signed in with confirmation (code, question, YES): the attacker of the send-message tests. */
  async function signedIn(phone = randomPhone()): Promise<LoginBody> {
    const reg = await registerPin(stack.webs[0]!.url);
    await say(phone, `PIN: ${reg.emoji}`);
    await waitText(phone, /^Sign in to /);
    await say(phone, 'YES');
    return collectLogin(stack.webs[0]!.url, reg.pin);
  }

  describe('the chat question and its YES', function () {
    const numberOf = (question: string): string => /Reply YES (\d{2}) to sign in, NO \1 /.exec(question)![1]!;
    const check = (pin: string) => post(stack.webs[1]!.url, '/check-login', { pin });

    it('a lured second code is not confirmed by a YES meant for the first: both are named, and "YES <n>" answers exactly one', async function () {
      const phone = randomPhone();
      const own = await registerPin(stack.webs[0]!.url);
      const lured = await registerPin(stack.webs[1]!.url);
      await say(phone, `PIN: ${own.emoji}`);
      const first = await waitText(phone, /^Sign in to /);
      const seen = textsTo(phone).length;
      await say(phone, `PIN: ${lured.emoji}`);
      const second = await waitText(phone, /^Sign in to /, seen);
      const [nOwn, nLured] = [numberOf(first), numberOf(second)];
      expect(nOwn).to.not.equal(nLured);

      // the bare YES meant for the first answers neither: the person is asked which one
      const before = textsTo(phone).length;
      await say(phone, 'YES');
      const which = await waitText(phone, /waiting for your answer/, before);
      expect(which).to.match(new RegExp(`^2 sign-ins to ${APP} are waiting for your answer: .*${nOwn}: .*; .*${nLured}: .*e\\.g\\. YES \\d\\d\\.$`));
      for (const pin of [own.pin, lured.pin]) expect((await check(pin)).body).to.include({ verified: false, awaitingConfirmation: true });

      // "YES <own number>" signs in the person's own registration, and only that one
      await say(phone, `YES ${nOwn}`);
      const login = await collectLogin(stack.webs[0]!.url, own.pin);
      expect(login.user.phone).to.equal(phone);
      expect((await check(lured.pin)).body).to.include({ verified: false, awaitingConfirmation: true });
      // the lured one, now the only question open, is refused by its number
      await say(phone, `NO ${nLured}`);
      await eventually(async () => ((await check(lured.pin)).status === 403 ? true : undefined), 15000, 100);
      expectError(await check(lured.pin), 'LOGIN_DENIED');
    });
  });

  describe('send-message', function () {
    let attacker: LoginBody;
    before(async function () {
      attacker = await signedIn();
    });

    it('a lure carrying a code or a chat answer is refused, and nothing reaches the victim', async function () {
      const victim = randomPhone();
      const victimCode = (await registerPin(stack.webs[0]!.url)).emoji;
      const lures = [
        `${APP} security check: reply PIN: ${victimCode} then YES`,
        `${APP} security check: send us these emoji\n${victimCode}\nthen answer\nYES`,
        'Reply to this message with\nSIM',
        `pin:${victimCode}`,
        'STOP',
      ];
      for (const message of lures) {
        const r = await post(stack.webs[0]!.url, '/send-message', { phoneNumber: victim, message }, attacker.token);
        expect(r.status, message).to.equal(400);
        expectError(r, 'VALIDATION_ERROR');
        expect(JSON.stringify(r.body.details), message).to.contain('message');
      }
      // an ordinary message goes out
      const ok = await post(stack.webs[1]!.url, '/send-message', { phoneNumber: victim, message: 'yes, see you at 5 👍' }, attacker.token);
      expect(ok.status, ok.text).to.equal(200);
      await waitText(victim, /see you at 5/);
      expect(textsTo(victim)).to.have.length(1);
    });

    it("a copy of the service's own question goes out headed by who sent it, never as the service", async function () {
      const victim = randomPhone();
      const copy = `Sign in to ${APP} on Chrome on Windows, 203.0.113.x, 27 Nov, 10:00 UTC? Reply YES to sign in, NO if this wasn't you.`;
      const r = await post(stack.webs[0]!.url, '/send-message', { phoneNumber: victim, message: copy }, attacker.token);
      expect(r.status, r.text).to.equal(200);
      const sent = await waitText(victim, /Sign in to/);
      const [heading, body] = sent.split('\n\n');
      expect(heading).to.match(/^Message from /);
      expect(heading).to.contain(attacker.user.phone);
      expect(heading).to.contain(`It is not from ${APP}`);
      expect(body).to.equal(copy);
    });
  });
});
