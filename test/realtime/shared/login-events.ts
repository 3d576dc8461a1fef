import { expect } from 'chai';
import { randomEmoji, randomPhone, randomPin, sendChat } from '../../helpers/flow.js';
import { get, post } from '../../helpers/http.js';
import { connected, sleep, type TestClient } from '../clients.js';
import type { ServiceNode, Stack } from '../../helpers/processes.js';
import { testRedis } from '../../helpers/redis.js';

interface Registered {
  success?: boolean;
  pinId: string;
  expiresIn: number;
  emojiString: string;
}
interface AuthSuccess {
  token: string;
  refreshToken: string;
  user: { id: string; name: string; phone: string; roles: string[] };
}

/** The login events, on a stack of three web nodes and a worker. */
export function loginEvents(stack: () => Stack<ServiceNode>): void {
  describe('login events', function () {
    const clients: TestClient[] = [];
    const open = async (node: number): Promise<TestClient> => {
      const c = await connected(stack().webs[node]!.url);
      clients.push(c);
      return c;
    };
    afterEach(() => {
      for (const c of clients.splice(0)) c.close();
    });

    /** As a client does (docs/api.md): a 503 NETWORK_ERROR (Redis slower than its command timeout, as on a loaded machine) is asked again. */
    const register = async (c: TestClient, pin: string, emojiString: string): Promise<Registered> => {
      for (let attempt = 1; ; attempt++) {
        const ack = (await c.socket.timeout(10000).emitWithAck('register-pin', { pin, emojiString })) as Registered & { error?: string };
        if (ack.error !== 'NETWORK_ERROR' || attempt === 3) return ack;
      }
    };

    it('delivers auth-success to the client on node A when the webhook reaches node B, and to nobody else', async function () {
      const [a, c] = [await open(0), await open(2)];
      const pin = randomPin();
      const emoji = randomEmoji();
      const phone = randomPhone();
      const reg = await register(a, pin, emoji);
      expect(reg.success).to.equal(true);
      // 180 less the seconds the answer took (a loaded machine can make it one or two)
      expect(reg.expiresIn).to.be.within(170, 180);
      expect(reg.pinId).to.be.a('string').and.not.equal('');
      expect(await a.next<Registered>('pin-registered')).to.deep.equal({ pinId: reg.pinId, expiresIn: reg.expiresIn, emojiString: emoji });
      const other = await register(c, randomPin(), randomEmoji());
      expect(other.success).to.equal(true);

      const hook = await sendChat(stack().webs[1]!.url, `PIN: ${emoji}`, { phone, pushName: 'Ada Lovelace' });
      expect(hook.status, hook.text).to.equal(200);

      const auth = await a.next<AuthSuccess>('auth-success');
      expect(auth.token).to.be.a('string');
      expect(auth.refreshToken).to.be.a('string');
      expect(auth.user).to.include({ name: 'Ada', phone });
      expect(auth.user.roles).to.deep.equal(['user']);
      // the token is real: the profile answers with it
      const profile = await get(stack().webs[2]!.url, '/profile', auth.token);
      expect(profile.status, profile.text).to.equal(200);
      // auth-success does not consume the result: the poller still collects it (once)
      const check = await post(stack().webs[0]!.url, '/check-login', { pin });
      expect(check.body).to.include({ verified: true, token: auth.token });

      await sleep(300);
      expect(a.of('auth-success')).to.have.length(1);
      expect(c.of('auth-success')).to.deep.equal([]);
      expect(c.of('pin-error')).to.deep.equal([]);
    });

    it('shares one channel under KEY_PREFIX: every web node listens where the worker publishes', async function () {
      const redis = testRedis();
      try {
        const [, listeners] = (await redis.pubsub('NUMSUB', `${stack().prefix}:socket.io-request#/#`)) as [string, number];
        expect(Number(listeners)).to.equal(stack().webs.length);
      } finally {
        redis.disconnect();
      }
    });

    it('sends auth-success to every socket that registered the PIN, on whichever node', async function () {
      const [a, b] = [await open(0), await open(1)];
      const pin = randomPin();
      const emoji = randomEmoji();
      const first = await register(a, pin, emoji);
      const second = await register(b, pin, emoji);
      expect(second.pinId, JSON.stringify(second)).to.equal(first.pinId);
      await sendChat(stack().webs[2]!.url, `PIN: ${emoji}`);
      const [ta, tb] = await Promise.all([a.next<AuthSuccess>('auth-success'), b.next<AuthSuccess>('auth-success')]);
      expect(ta.token).to.equal(tb.token);
    });

    it('re-joins after reconnecting to another node: same pinId, seconds left, and the login arrives there', async function () {
      const a = await open(0);
      const pin = randomPin();
      const emoji = randomEmoji();
      const reg = await register(a, pin, emoji);
      a.close();
      const b = await open(1);
      const again = await register(b, pin, emoji);
      expect(again.pinId).to.equal(reg.pinId);
      expect(again.expiresIn).to.be.within(1, 180);
      expect(await b.next<Registered>('pin-registered')).to.deep.equal({ pinId: reg.pinId, expiresIn: again.expiresIn, emojiString: emoji });
      await sendChat(stack().webs[2]!.url, `PIN: ${emoji}`);
      const auth = await b.next<AuthSuccess>('auth-success');
      expect(auth.token).to.be.a('string');
    });

    it('re-joining after an uncollected login gets auth-success at once, once', async function () {
      const a = await open(0);
      const pin = randomPin();
      const emoji = randomEmoji();
      const reg = await register(a, pin, emoji);
      await sendChat(stack().webs[1]!.url, `PIN: ${emoji}`);
      const missed = await a.next<AuthSuccess>('auth-success'); // the login happened; say this client lost it
      a.close();
      const c = await open(2);
      const again = await register(c, pin, emoji);
      expect(again.pinId).to.equal(reg.pinId);
      const auth = await c.next<AuthSuccess>('auth-success');
      expect(auth).to.deep.equal(missed);
      await sleep(200);
      expect(c.of('auth-success')).to.have.length(1);
    });

    it('the same PIN with another emoji string from another connection: a decoy, and that connection gets none of its events', async function () {
      const [a, b] = [await open(1), await open(2)];
      const pin = randomPin();
      const emoji = randomEmoji();
      const real = await register(a, pin, emoji);
      const other = randomEmoji();
      const decoy = await register(b, pin, other);
      expect(decoy).to.include({ success: true, expiresIn: 180, emojiString: other });
      expect(decoy.pinId).to.not.equal(real.pinId);
      expect(b.of('pin-error')).to.deep.equal([]);
      await sendChat(stack().webs[0]!.url, `PIN: ${emoji}`);
      expect((await a.next<AuthSuccess>('auth-success')).token).to.be.a('string');
      await sleep(300);
      expect(b.of('auth-success')).to.deep.equal([]);
    });

    it('cancel-auth ends the registration: acknowledged with its pinId, then check-login answers 404', async function () {
      const a = await open(2);
      const pin = randomPin();
      const emoji = randomEmoji();
      const reg = await register(a, pin, emoji);
      const ack = await a.socket.timeout(10000).emitWithAck('cancel-auth', { pin });
      expect(ack).to.deep.equal({ success: true, pinId: reg.pinId });
      const check = await post(stack().webs[0]!.url, '/check-login', { pin });
      expect(check.status, check.text).to.equal(404);
      expect(check.body.error).to.equal('PIN_NOT_FOUND');
      // the emoji string is free again, and a chat message for the cancelled one logs nobody in
      await sendChat(stack().webs[1]!.url, `PIN: ${emoji}`);
      const again = await a.socket.timeout(10000).emitWithAck('cancel-auth', { pin });
      expect(again).to.include({ success: false, error: 'PIN_NOT_FOUND' });
      expect(await a.next('pin-error')).to.include({ error: 'PIN_NOT_FOUND' });
      await sleep(300);
      expect(a.of('auth-success')).to.deep.equal([]);
    });

    it('a connection whose registrations all ended (one delivered, one cancelled) follows a new one to its login', async function () {
      const a = await open(0);
      const first = { pin: randomPin(), emoji: randomEmoji() };
      expect(await register(a, first.pin, first.emoji)).to.include({ success: true });
      const hook = await sendChat(stack().webs[1]!.url, `PIN: ${first.emoji}`, { phone: randomPhone() });
      expect(hook.status, hook.text).to.equal(200);
      await a.next<AuthSuccess>('auth-success');
      // the connection follows nothing now; one more, cancelled, and again nothing
      const second = randomPin();
      expect(await register(a, second, randomEmoji())).to.include({ success: true });
      expect(await a.socket.timeout(10000).emitWithAck('cancel-auth', { pin: second })).to.include({ success: true });

      const third = { pin: randomPin(), emoji: randomEmoji() };
      const reg = await register(a, third.pin, third.emoji);
      expect(reg.success).to.equal(true);
      const phone = randomPhone();
      expect((await sendChat(stack().webs[2]!.url, `PIN: ${third.emoji}`, { phone })).status).to.equal(200);
      const auth = await a.next<AuthSuccess>('auth-success');
      expect(auth.user).to.include({ phone });
      await sleep(300);
      expect(a.of('auth-success')).to.have.length(2);
      expect(a.of('pin-error')).to.deep.equal([]);
    });

    it('answers register-pin by event alone when the client passes no acknowledgement', async function () {
      const a = await open(0);
      a.socket.emit('register-pin', { pin: randomPin(), emojiString: randomEmoji() });
      const reg = await a.next<Registered>('pin-registered');
      expect(reg.expiresIn).to.equal(180);
      expect(reg).to.have.all.keys('pinId', 'expiresIn', 'emojiString');
    });
  });
}
