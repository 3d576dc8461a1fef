import { expect } from 'chai';
import { describeDevice, maskIp, originOf, encodeOrigin, decodeOrigin } from '../../../src/registrations/origin.js';
import { chatIntent } from '../../../src/chat/intent.js';
import { replyText } from '../../../src/chat/texts.js';
import { ConfigError, loadConfig } from '../../../src/config.js';

/** The chat side of a login: what a person's message means, what we answer, and how a device is named. */
describe('core unit: chat intents, reply texts, origins', function () {
  it('reads codes, YES / NO in any catalogue language or as 1 / 2, and STOP', function () {
    expect(chatIntent('PIN: 🍎🚀')).to.deep.equal({ kind: 'code', emoji: '🍎🚀' });
    for (const t of ['YES', 'yes!', ' Yes. ', '1', 'sim', 'Sí', 'ok']) expect(chatIntent(t), t).to.deep.equal({ kind: 'yes' });
    for (const t of ['NO', 'no.', '2', 'Não', 'nao']) expect(chatIntent(t), t).to.deep.equal({ kind: 'no' });
    for (const t of ['STOP', 'stop', 'Parar', 'STOP!']) expect(chatIntent(t), t).to.deep.equal({ kind: 'stop' });
    // an answer naming its question (the number the question carries)
    for (const t of ['YES 47', 'yes #47', 'Sim 47', 'sí, 47', 'yes47', '1 47']) expect(chatIntent(t), t).to.deep.equal({ kind: 'yes', question: '47' });
    for (const t of ['NO 12', 'Não 12', '2 12']) expect(chatIntent(t), t).to.deep.equal({ kind: 'no', question: '12' });
    for (const t of ['47', 'YES 4', 'YES 470', 'STOP 47', '147']) expect(chatIntent(t).kind, t).to.equal('other');
    for (const t of ['yes please sign me in', 'hello', '12', '', 'y'.repeat(500)]) expect(chatIntent(t), t).to.deep.equal({ kind: 'other' });
    expect(chatIntent(null)).to.deep.equal({ kind: 'other' });
  });

  it('names devices from User-Agents, briefly, whatever the header holds', function () {
    const cases: Array<[string | undefined, string]> = [
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome on Windows'],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 'Edge on Windows'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'Safari on macOS'],
      [
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1',
        'Chrome on iOS',
      ],
      ['Mozilla/5.0 (Android 14; Mobile; rv:132.0) Gecko/132.0 Firefox/132.0', 'Firefox on Android'],
      ['okhttp/4.12.0', 'Android app'],
      ['curl/8.5.0', 'curl'],
      // Node's fetch, older undici, socket.io-client's polling in Node, other runtimes' clients
      ['node', 'Node.js app'],
      ['undici', 'Node.js app'],
      ['node-XMLHttpRequest', 'Node.js app'],
      ['axios/1.7.2', 'Node.js app'],
      ['pin-auth-client (Node.js v20.20.2)', 'Node.js app'],
      ['Deno/2.1.4', 'Deno app'],
      ['Bun/1.1.38', 'Bun app'],
      ['python-requests/2.32.3', 'Python app'],
      ['Go-http-client/1.1', 'Go app'],
      ['Java-http-client/21.0.5', 'Java app'],
      // no User-Agent (a socket client from Node: ws sends none; every browser sends one)
      [undefined, 'unnamed app'],
      ['', 'unnamed app'],
      ['got (https://github.com/sindresorhus/got)', 'Node.js app'],
      ['MyThing/1.0', 'unknown device'],
      ['\n'.repeat(10) + 'x'.repeat(10000), 'unknown device'],
    ];
    for (const [ua, name] of cases) expect(describeDevice(ua), String(ua).slice(0, 40)).to.equal(name);
  });

  it('masks addresses: IPv4 to /24, IPv6 to /48, mapped IPv4 as IPv4', function () {
    expect(maskIp('203.0.113.77')).to.equal('203.0.113.x');
    expect(maskIp('::ffff:198.51.100.9')).to.equal('198.51.100.x');
    expect(maskIp('2001:db8:85a3:1234:5678::1')).to.equal('2001:db8:85a3::/48');
    // the usual short form (RFC 5952): the longest run of zero groups as ::
    expect(maskIp('2001:db8::1')).to.equal('2001:db8::/48');
    expect(maskIp('::1')).to.equal('::/48');
    expect(maskIp('2001:0:5::1')).to.equal('2001:0:5::/48');
    expect(maskIp('fe80::1%eth0')).to.equal('fe80::/48');
    expect(maskIp('::ffff:cb00:7107')).to.equal('203.0.113.x');
    expect(maskIp('2001:db8::1/48')).to.equal('unknown network');
    expect(maskIp('not an ip')).to.equal('unknown network');
    const o = originOf('curl/8', '10.1.2.3');
    expect(decodeOrigin(encodeOrigin(o))).to.deep.equal(o);
  });

  it('fills the configured texts: language, app name, overrides, time zone', function () {
    const pt = loadConfig({ CHAT_LANGUAGE: 'pt', APP_NAME: 'Banco', CHAT_TIME_ZONE: 'America/Sao_Paulo' }).replies;
    const question = replyText(pt, {
      kind: 'confirm',
      origin: { device: 'Chrome on Windows', ip: '203.0.113.x' },
      requestedAt: new Date('2026-03-01T12:00:00Z'),
      question: '47',
    });
    expect(question).to.match(
      /^Entrar no Banco em Chrome on Windows, 203\.0\.113\.x, 1 de mar\.?,? 09:00.*\? Responda SIM 47 para entrar, NÃO 47 se não foi você\.$/,
    );
    expect(replyText(pt, { kind: 'signed-in' })).to.equal('Você entrou no Banco. Não foi você? Responda PARAR para sair de todos os aparelhos.');
    const en = loadConfig({ REPLY_SIGNED_IN: 'Hi from {app}.', REPLY_UNDO_HINT: 'Undo: STOP.' }).replies;
    expect(replyText(en, { kind: 'signed-in' })).to.equal('Hi from pin-auth. Undo: STOP.');
    expect(replyText(en, { kind: 'signed-out', sessions: 3 })).to.equal('Done: you are signed out of pin-auth everywhere (3 sessions ended).');
  });

  it('refuses an unknown language or time zone, and confirmation without chat replies', function () {
    expect(loadConfig({}).loginConfirmation).to.equal(false);
    expect(loadConfig({ LOGIN_CONFIRMATION: 'on' }).loginConfirmation).to.equal(true);
    expect(() => loadConfig({ CHAT_LANGUAGE: 'xx' })).to.throw(ConfigError, /CHAT_LANGUAGE/);
    expect(() => loadConfig({ CHAT_TIME_ZONE: 'Mars/Olympus' })).to.throw(ConfigError, /CHAT_TIME_ZONE/);
    expect(() => loadConfig({ LOGIN_CONFIRMATION: 'on', CHAT_REPLIES: 'off' })).to.throw(ConfigError, /LOGIN_CONFIRMATION/);
  });

  it('accepts every zone a DateTimeFormat takes: UTC, canonical names and aliases', function () {
    // the canonical list is checked first, the aliases (not in it) through a DateTimeFormat
    for (const zone of ['UTC', 'Etc/UTC', 'GMT', 'Europe/Lisbon', 'America/Sao_Paulo', 'Asia/Kolkata', 'US/Eastern']) {
      expect(loadConfig({ CHAT_TIME_ZONE: zone }).replies.timeZone, zone).to.equal(zone);
    }
    expect(() => loadConfig({ CHAT_TIME_ZONE: 'Europe/Atlantis' })).to.throw(ConfigError, /CHAT_TIME_ZONE/);
  });
});
