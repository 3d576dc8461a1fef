import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { AccountEraser } from '../../src/accounts/chat-rights.js';
import { SYSTEM } from '../../src/accounts/actor.js';
import { Blocks } from '../../src/accounts/block.js';
import { ERASE_CONFIRM_MINUTES } from '../../src/accounts/chat-rights.js';
import { Eraser } from '../../src/accounts/erase.js';
import type { Holding } from '../../src/accounts/holdings.js';
import { ANSWERS, CATALOGUE, LANGUAGES, fill } from '../../src/chat-catalogue.js';
import { chatIntent } from '../../src/chat/intent.js';
import { chatCommandIn } from '../../src/chat/relay.js';
import { createApp } from '../../src/http/app.js';
import { redisAdapterFactory } from '../../src/oidc/adapter.js';
import { startWorkers, type WorkerHost } from '../../src/queues/worker-host.js';
import type { Services } from '../../src/services.js';
import { randomEmoji, randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { evolutionMessage, outboundOf, startFakeEvolution, type FakeEvolution } from '../helpers/gateway.js';
import { eventually, get, post, request } from '../helpers/http.js';
import { testRedis } from '../helpers/redis.js';
import { startServices, stopServices } from '../helpers/services.js';

const EVO_KEY = 'chat-commands-evolution-key';
const INSTANCE = 'test-instance';
const FIREFOX_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const CHROME_ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';

const digits = (phone: string): string => phone.replace(/^\+/, '');

/** Every key name matching `match` (SCAN, on the tests' one Redis). */
async function keyNames(match: string): Promise<string[]> {
  const redis = testRedis();
  try {
    const names: string[] = [];
    for await (const page of redis.scanStream({ match, count: 1000 })) names.push(...(page as string[]));
    return names;
  } finally {
    redis.disconnect();
  }
}
const newLid = (): string => String(100000000000000 + Math.floor(Math.random() * 8e14));

/** A sender as the gateway names them: a phone, and a LID when given (Evolution's `…@lid` chat with the number beside it). */
interface Sender {
  phone: string;
  lid?: string;
}

/**
 * The web app and the workers of one deployment in this process (its own KEY_PREFIX), the fake
 * Evolution taking its replies: a message goes in through the webhook, the real inbound worker
 * handles it, the real outbound worker sends the reply the fake records.
 */
interface World {
  services: Services;
  host: WorkerHost;
  server: http.Server;
  url: string;
}

async function startWorld(evo: FakeEvolution, name: string, env: Record<string, string>, eraser?: AccountEraser): Promise<World> {
  const services = await startServices(name, {
    MESSAGING_PROVIDER: 'evolution',
    EVOLUTION_API_URL: evo.url,
    EVOLUTION_API_KEY: EVO_KEY,
    EVOLUTION_INSTANCE: INSTANCE,
    APP_NAME: 'Acme',
    ...env,
  });
  const host = startWorkers(eraser ? { ...services, eraser } : services);
  const server = http.createServer(createApp(services).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { services, host, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stopWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  await new Promise<void>((resolve) => w.server.close(() => resolve()));
  await w.host.close(5000);
  await stopServices(w.services);
}

describe("messaging: the person's own commands in the chat (HELP, SESSIONS, DELETE)", function () {
  describe('the words, in every chat language', function () {
    it('every language has every command text, and the commands its texts name are understood', function () {
      for (const language of LANGUAGES) {
        const t = CATALOGUE[language];
        for (const field of [
          'help',
          'sessions',
          'noSessions',
          'sessionItem',
          'oidcItem',
          'eraseConfirm',
          'erased',
          'nothingToErase',
          'eraseBlocked',
          'noAccount',
        ] as const) {
          expect(t[field], `${language}.${field}`).to.be.a('string').and.not.equal('');
        }
        // HELP names its commands in capitals: each is understood as what it says it is
        const named = t.help.match(/(?<!\p{L})\p{Lu}{4,}(?!\p{L})/gu)!.map((w) => chatIntent(w).kind);
        expect(named, language).to.have.members(['sessions', 'stop', 'delete', 'help']);
        // the confirmation's own words, with its number, confirm it
        const asked = fill(t.eraseConfirm, { app: 'Acme', number: '42', minutes: ERASE_CONFIRM_MINUTES });
        const [, command] = /(\p{Lu}{4,} 42)/u.exec(asked)!;
        expect(chatIntent(command!), language).to.deep.equal({ kind: 'delete', confirm: '42' });
        expect(asked).to.include(String(ERASE_CONFIRM_MINUTES));
      }
    });

    it('reads the commands in any language and case, DELETE with its number; leaves the rest alone', function () {
      for (const w of ['HELP', 'ajuda', 'Ayuda!', 'menu']) expect(chatIntent(w), w).to.deep.equal({ kind: 'help' });
      for (const w of ['SESSIONS', 'sessões', 'Sesiones', 'aparelhos', 'dispositivos.']) expect(chatIntent(w), w).to.deep.equal({ kind: 'sessions' });
      for (const w of ['DELETE', 'apagar', 'Excluir', 'BORRAR', 'eliminar']) expect(chatIntent(w), w).to.deep.equal({ kind: 'delete' });
      for (const w of ['DELETE 42', 'apagar #42', 'Borrar: 42', 'delete42']) expect(chatIntent(w), w).to.deep.equal({ kind: 'delete', confirm: '42' });
      // one or three digits are no number of ours; YES / NO / STOP read as before
      for (const w of ['delete 4', 'delete 420', 'please delete my account', 'help me']) expect(chatIntent(w).kind, w).to.equal('other');
      expect(chatIntent('YES 42')).to.deep.equal({ kind: 'yes', question: '42' });
      expect(chatIntent('parar')).to.deep.equal({ kind: 'stop' });
      expect(ANSWERS.delete).to.include('apagar');
    });

    it("a user's /send-message may not carry a DELETE line (nobody is talked into erasing their account in the service's voice)", function () {
      expect(chatCommandIn('Security check: reply\nDELETE\nthen\nDELETE 42')).to.match(/chat answer/);
      expect(chatCommandIn('APAGAR 17')).to.match(/chat answer/);
      expect(chatCommandIn('Please delete the old photos')).to.equal(null);
    });
  });

  describe('through the real workers, Evolution faked', function () {
    this.timeout(60000);
    let evo: FakeEvolution;
    let en: World;
    let pt: World;
    /** accounts the chat asked the eraser to erase, in order */
    const erased: string[] = [];
    /** the next erase dies once the account's identifier links are gone (a worker crash mid-erase) */
    let faultMidErase = false;

    before(async function () {
      this.timeout(30000);
      evo = await startFakeEvolution({ apiKey: EVO_KEY, instances: [INSTANCE] });
      // the real erase (services.ts's), with one more holding after the identifier links that
      // can die once: a worker crash in the middle of an erase
      const eraser = (w: () => World): AccountEraser => ({
        async erase(userId, actor, meta) {
          expect(actor).to.deep.equal({ kind: 'user', userId });
          erased.push(userId);
          const { redis, keys, holdings, audit } = w().services;
          const fault: Holding = {
            name: 'fault',
            export: async () => null,
            async erase() {
              if (!faultMidErase) return 0;
              faultMidErase = false;
              throw new Error('injected fault in the middle of an erase');
            },
          };
          const at = holdings.findIndex((h) => h.name === 'identifiers') + 1;
          expect(at).to.be.greaterThan(0);
          return new Eraser(redis, keys, [...holdings.slice(0, at), fault, ...holdings.slice(at)], audit).erase(userId, actor, meta);
        },
      });
      en = await startWorld(
        evo,
        'chat-cmd-en',
        {},
        eraser(() => en),
      );
      pt = await startWorld(evo, 'chat-cmd-pt', { CHAT_LANGUAGE: 'pt', SENDER_MESSAGES_PER_MINUTE: '2' });
    });
    after(async function () {
      this.timeout(30000);
      await stopWorld(en);
      await stopWorld(pt);
      await evo?.close();
    });

    /** where replies go: the phone (Evolution answers a LID chat that names its number on the number) */
    const addressOf = (s: Sender): string => digits(s.phone);
    const repliesTo = (s: Sender): string[] => evo.accepted.filter((r) => outboundOf(r).to === addressOf(s)).map((r) => outboundOf(r).text ?? '');
    /** Sends `text` from the sender and waits for the reply it gets (the sender's replies so far plus one). */
    async function say(w: World, s: Sender, text: string): Promise<string> {
      const before = repliesTo(s).length;
      const body =
        s.lid !== undefined
          ? evolutionMessage({ text, phone: s.phone, remoteJid: `${s.lid}@lid`, remoteJidAlt: `${digits(s.phone)}@s.whatsapp.net` })
          : evolutionMessage({ text, phone: s.phone });
      const r = await request(w.url, 'POST', '/messaging-endpoint', { json: body });
      expect(r.status, r.text).to.equal(200);
      return eventually(async () => repliesTo(s)[before], 15000);
    }
    /** A whole chat login of the sender from a browser: the verified check-login body. */
    async function login(w: World, s: Sender, userAgent = FIREFOX_WINDOWS): Promise<LoginBody> {
      const pin = randomPin();
      const emoji = randomEmoji();
      const reg = await request(w.url, 'POST', '/register-pin', { json: { pin, emojiString: emoji }, headers: { 'user-agent': userAgent } });
      expect(reg.status, reg.text).to.equal(200);
      await say(w, s, `PIN: ${emoji}`);
      return eventually(async () => {
        const c = await post<LoginBody>(w.url, '/check-login', { pin });
        return c.body.verified ? c.body : undefined;
      }, 15000);
    }
    const numberIn = (asked: string): string => /DELETE (\d{2}) within/.exec(asked)![1]!;
    const userExists = async (userId: string): Promise<boolean> => (await en.services.redis.exists(en.services.keys.user(userId))) === 1;

    it('HELP answers in the chat language whichever language it is asked in; a Portuguese deployment answers in Portuguese', async function () {
      const help = fill(CATALOGUE.en.help, { app: 'Acme' });
      // no account needed to ask
      const s = { phone: randomPhone() };
      expect(await say(en, s, 'HELP')).to.equal(help);
      expect(await say(en, s, 'ajuda')).to.equal(help);
      const p = { phone: randomPhone() };
      const ajuda = await say(pt, p, 'AJUDA');
      expect(ajuda).to.equal(fill(CATALOGUE.pt.help, { app: 'Acme' }));
      expect(ajuda).to.include('APAGAR').and.include('SESSÕES').and.include('PARAR');
    });

    it('the per-sender budget holds for commands too: past it they do nothing and the sender is told once', async function () {
      const p = { phone: randomPhone() };
      expect(await say(pt, p, 'ajuda')).to.equal(fill(CATALOGUE.pt.help, { app: 'Acme' }));
      expect(await say(pt, p, 'sessões')).to.equal(fill(CATALOGUE.pt.noAccount, { app: 'Acme' }));
      expect(await say(pt, p, 'apagar')).to.equal(fill(CATALOGUE.pt.slowDown, { app: 'Acme' }));
    });

    it("SESSIONS lists the sender's own app sessions and OpenID logins, nobody else's; a sender with no account is told so", async function () {
      const me = { phone: randomPhone() };
      const other = { phone: randomPhone() };
      const first = await login(en, me, FIREFOX_WINDOWS);
      await login(en, me, SAFARI_IPHONE);
      await login(en, other, CHROME_ANDROID);
      // an OpenID login as the provider keeps it (its own adapter): the grant, and the browser it came from
      const { redis, keys, oidcLogins } = en.services;
      const grantId = randomBytes(12).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const grants = redisAdapterFactory(redis, keys, oidcLogins)('Grant');
      await grants.upsert(grantId, { kind: 'Grant', jti: grantId, grantId, accountId: first.user.id, clientId: 'shop-web', iat: now, exp: now + 3600 }, 3600);
      await oidcLogins.noteBrowser(first.user.id, grantId, { device: 'Edge on macOS', ip: '198.51.100.x' });

      const listed = await say(en, me, 'sessions');
      expect(listed).to.match(/^Where you are signed in to Acme \(3\): /);
      expect(listed).to.include('Firefox on Windows, 127.0.0.x, last used');
      expect(listed).to.include('Safari on iOS, 127.0.0.x, last used');
      expect(listed).to.include('shop-web on Edge on macOS, 198.51.100.x, last used');
      expect(listed).to.not.include('Chrome on Android');

      // after STOP nothing is open
      await say(en, me, 'STOP');
      expect(await say(en, me, 'devices')).to.equal(fill(CATALOGUE.en.noSessions, { app: 'Acme' }));
      expect(await say(en, { phone: randomPhone() }, 'SESSIONS')).to.equal(fill(CATALOGUE.en.noAccount, { app: 'Acme' }));
    });

    it("DELETE asks for a number; a wrong number or another phone erases nothing; the number erases the sender's own account only (recycled number)", async function () {
      const phone = randomPhone();
      const previous = { phone, lid: newLid() };
      const newcomer = { phone, lid: newLid() };
      const stranger = { phone: randomPhone() };
      // the number's previous owner, then the person it was recycled to: two accounts
      const old = await login(en, previous);
      const mine = await login(en, newcomer, SAFARI_IPHONE);
      const theirs = await login(en, stranger);
      expect(mine.user.id).to.not.equal(old.user.id);

      const asked = await say(en, newcomer, 'DELETE');
      const n = numberIn(asked);
      expect(asked).to.equal(fill(CATALOGUE.en.eraseConfirm, { app: 'Acme', number: n, minutes: ERASE_CONFIRM_MINUTES }));
      const { redis, keys } = en.services;
      // one confirmation per account, for the window only
      const ttl = await redis.ttl(keys.eraseAsk(mine.user.id));
      expect(ttl).to.be.within(1, ERASE_CONFIRM_MINUTES * 60);

      const wrong = String(((Number(n) - 10 + 1) % 90) + 10);
      const refused = fill(CATALOGUE.en.nothingToErase, { app: 'Acme' });
      expect(await say(en, newcomer, `DELETE ${wrong}`)).to.equal(refused);
      // another phone with an account of its own, and one with none: nothing erased either
      expect(await say(en, stranger, `DELETE ${n}`)).to.equal(refused);
      expect(await say(en, { phone: randomPhone() }, `DELETE ${n}`)).to.equal(fill(CATALOGUE.en.noAccount, { app: 'Acme' }));
      expect(erased).to.deep.equal([]);
      for (const id of [old.user.id, mine.user.id, theirs.user.id]) expect(await userExists(id), id).to.equal(true);
      expect((await get(en.url, '/profile', mine.token)).status).to.equal(200);

      // the number, from the sender it was given to: their account goes, the previous owner's stays
      expect(await say(en, newcomer, `delete ${n}`)).to.equal(fill(CATALOGUE.en.erased, { app: 'Acme' }));
      expect(erased).to.deep.equal([mine.user.id]);
      expect(await userExists(mine.user.id)).to.equal(false);
      expect(await userExists(old.user.id)).to.equal(true);
      expect(await redis.get(keys.identity('lid', previous.lid))).to.equal(old.user.id);
      expect(await userExists(theirs.user.id)).to.equal(true);
      expect((await get(en.url, '/profile', mine.token)).status).to.equal(401);
      expect((await get(en.url, '/profile', theirs.token)).status).to.equal(200);
      expect((await get(en.url, '/profile', old.token)).status).to.equal(200);
      // no key is named after the erased account or its LID (C's erase test reads every value too)
      const names = await keyNames(`${keys.prefix}:*`);
      expect(names.filter((k) => k.includes(mine.user.id) || k.includes(newcomer.lid))).to.deep.equal([]);
      // nothing of the confirmation is left
      expect(await redis.exists(keys.eraseAsk(mine.user.id))).to.equal(0);
      expect(await say(en, newcomer, `DELETE ${n}`)).to.equal(fill(CATALOGUE.en.noAccount, { app: 'Acme' }));

      // the next code from the phone makes a new account
      const again = await login(en, newcomer);
      expect(again.user.id).to.not.be.oneOf([mine.user.id, old.user.id]);
      expect(again.user.phone).to.equal(phone);
    });

    it('a blocked account is not erased from the chat, not even by a number asked before the block', async function () {
      const me = { phone: randomPhone() };
      const account = await login(en, me);
      const n = numberIn(await say(en, me, 'DELETE'));
      await new Blocks(en.services.scripts, en.services.keys, en.services.sessions, en.services.audit).block(account.user.id, SYSTEM, 'abuse');
      const refused = fill(CATALOGUE.en.eraseBlocked, { app: 'Acme' });
      expect(await say(en, me, `DELETE ${n}`)).to.equal(refused);
      expect(await say(en, me, 'DELETE')).to.equal(refused);
      expect(erased).to.not.include(account.user.id);
      expect(await userExists(account.user.id)).to.equal(true);
    });

    it("a fault in the middle of the erase: the job's retry finishes erasing the same account, though its links are gone", async function () {
      const me = { phone: randomPhone(), lid: newLid() };
      const account = await login(en, me);
      const n = numberIn(await say(en, me, 'DELETE'));
      erased.length = 0;
      faultMidErase = true;
      // one message, one reply: the retry's, once the erase is done
      expect(await say(en, me, `DELETE ${n}`)).to.equal(fill(CATALOGUE.en.erased, { app: 'Acme' }));
      expect(erased).to.deep.equal([account.user.id, account.user.id]);
      expect(await userExists(account.user.id)).to.equal(false);
      const { redis, keys } = en.services;
      expect(await redis.exists(keys.eraseAsk(account.user.id))).to.equal(0);
      expect(await keyNames(`${keys.prefix}:erase-msg:*`)).to.deep.equal([]);
    });
  });
});
