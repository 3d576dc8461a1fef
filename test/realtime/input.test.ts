import { expect } from 'chai';
import { randomEmoji, randomPin } from '../helpers/flow.js';
import { request } from '../helpers/http.js';
import { connected, sleep, type TestClient } from './clients.js';
import { useStack } from './stack.js';

interface Answer {
  success: boolean;
  error?: string;
  pinId?: string;
  retryAfter?: number;
}

describe('realtime: bad input, limits and flooding', function () {
  // behind a "proxy": each client comes from an address of its own, so per-IP limits are real
  const stack = useStack({ name: 'rt-input', inProcess: true, webs: 1, env: { TRUST_PROXY: 'true', RATE_REGISTER_PER_MINUTE: '30' } });
  let lastIp = 0;
  const newIp = (): string => `198.51.100.${++lastIp}`;
  const clients: TestClient[] = [];
  const open = async (ip = newIp()): Promise<TestClient> => {
    const c = await connected(stack().webs[0]!.url, { extraHeaders: { 'x-forwarded-for': `203.0.113.9, ${ip}` } });
    clients.push(c);
    return c;
  };
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  it('answers payloads of the wrong shape with pin-error VALIDATION_ERROR and stays usable', async function () {
    const a = await open();
    const bad: Array<[string, unknown]> = [
      ['register-pin', 42],
      ['register-pin', null],
      ['register-pin', ['pin-1234', '🍎']],
      ['register-pin', 'pin-1234 🍎'],
      ['register-pin', { pin: randomPin(), emojiString: null }],
      ['register-pin', { emojiString: '🍎🚀' }],
      ['register-pin', { pin: randomPin(), emojiString: 'abc' }],
      ['register-pin', { pin: 'has space', emojiString: '🍎' }],
      ['register-pin', { pin: randomPin(), emojiString: 7 }],
      ['cancel-auth', 3.5],
      ['cancel-auth', {}],
      ['no-such-event', { pin: 'x' }],
    ];
    for (const [event, payload] of bad) {
      const ack = (await a.socket.timeout(10000).emitWithAck(event, payload)) as Answer;
      expect(ack, `${event} ${JSON.stringify(payload)}`).to.include({ success: false, error: 'VALIDATION_ERROR' });
    }
    const errors = a.of('pin-error') as Answer[];
    expect(errors).to.have.length(bad.length);
    for (const e of errors) expect(e).to.include({ error: 'VALIDATION_ERROR' }).and.have.property('message').that.is.a('string');

    // no payload at all, only an acknowledgement; and no payload and no acknowledgement
    expect(await a.socket.timeout(10000).emitWithAck('register-pin')).to.include({ success: false, error: 'VALIDATION_ERROR' });
    a.socket.emit('cancel-auth');
    await a.next('pin-error');
    const ok = (await a.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as Answer;
    expect(ok.success).to.equal(true);
    expect(a.socket.connected).to.equal(true);
  });

  it('follows at most 16 pending registrations per connection', async function () {
    const a = await open();
    const pins = Array.from({ length: 17 }, () => randomPin());
    const answers: Answer[] = [];
    for (const pin of pins) {
      answers.push((await a.socket.timeout(10000).emitWithAck('register-pin', { pin, emojiString: randomEmoji() })) as Answer);
    }
    expect(answers.slice(0, 16).every((x) => x.success)).to.equal(true);
    expect(answers[16]).to.include({ success: false, error: 'RATE_LIMITED' });
    // cancelling one makes room again
    expect(await a.socket.timeout(10000).emitWithAck('cancel-auth', { pin: pins[0] })).to.include({ success: true });
    const again = (await a.socket.timeout(10000).emitWithAck('register-pin', { pin: pins[16], emojiString: randomEmoji() })) as Answer;
    expect(again.success, JSON.stringify(again)).to.equal(true);
  });

  it('shares the per-IP registration limit with HTTP', async function () {
    const ip = newIp();
    let status = 0;
    for (let i = 0; i < 40 && status !== 429; i++) {
      const res = await request(stack().url, 'POST', '/register-pin', {
        json: { pin: randomPin(), emojiString: randomEmoji() },
        headers: { 'x-forwarded-for': ip },
      });
      status = res.status;
    }
    expect(status).to.equal(429);
    const sameIp = await open(ip);
    const refused = (await sameIp.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as Answer;
    expect(refused).to.include({ success: false, error: 'RATE_LIMITED' });
    expect(refused.retryAfter).to.be.a('number');
    const otherIp = await open();
    expect(((await otherIp.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as Answer).success).to.equal(
      true,
    );
  });

  it('throttles a flooding socket with pin-error RATE_LIMITED while another socket is served', async function () {
    const [flooder, other] = [await open(), await open()];
    const answers = Array.from({ length: 60 }, () => flooder.socket.timeout(10000).emitWithAck('cancel-auth', { pin: randomPin() }) as Promise<Answer>);
    const reg = (await other.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as Answer;
    expect(reg.success).to.equal(true);
    const all = await Promise.all(answers);
    const limited = all.filter((x) => x.error === 'RATE_LIMITED');
    expect(limited.length).to.be.at.least(60 - 20);
    expect(limited[0]!.retryAfter).to.be.a('number');
    expect(all.filter((x) => x.error === 'PIN_NOT_FOUND').length).to.be.at.most(20);
    // told once per window by event, every time by acknowledgement
    expect((flooder.of('pin-error') as Answer[]).filter((e) => e.error === 'RATE_LIMITED')).to.have.length(1);
    expect(other.of('pin-error')).to.deep.equal([]);

    await sleep(1100);
    const later = (await flooder.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as Answer;
    expect(later.success, JSON.stringify(later)).to.equal(true);
  });

  it('cuts a connection that keeps flooding far past its budget', async function () {
    const flooder = await open();
    const reason = new Promise<string>((resolve) => flooder.socket.once('disconnect', (r) => resolve(r)));
    for (let i = 0; i < 400; i++) flooder.socket.emit('cancel-auth', 1);
    expect(await reason).to.equal('io server disconnect');
    await sleep(100);
    expect(
      stack()
        .webs[0]!.output()
        .match(/socket cut for flooding/g),
    ).to.have.length(1);
    const other = await open();
    expect(((await other.socket.timeout(10000).emitWithAck('register-pin', { pin: randomPin(), emojiString: randomEmoji() })) as Answer).success).to.equal(
      true,
    );
  });
});
