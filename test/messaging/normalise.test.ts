import { expect } from 'chai';
import { normaliseWebhook, phoneFromJid, type Normalised } from '../../src/messaging/inbound.js';
import { parseRetryAfter, ProviderError } from '../../src/messaging/providers/provider.js';
import { outboundBackoff } from '../../src/queues/workers/outbound.js';
import { cloudMessage, evolutionMessage } from '../helpers/gateway.js';

type Obj = Record<string, unknown>;

function accepted(n: Normalised) {
  if (n.kind !== 'messages') throw new Error(`invalid: ${n.reason}`);
  return n;
}

/** A Cloud API notification whose one change carries this `value`. */
function cloudValue(value: Obj, field = 'messages'): Obj {
  return { object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field, value: { messaging_product: 'whatsapp', ...value } }] }] };
}

describe('messaging: payload normalisation (details of both gateways)', function () {
  describe('Evolution API', function () {
    it('reads text from a disappearing-message chat and the upper-case event name of the global webhook', function () {
      const body = evolutionMessage({ text: 'x', phone: '+5511999998888' }) as Obj & { data: Obj };
      body.event = 'MESSAGES_UPSERT';
      body.data.message = { ephemeralMessage: { message: { extendedTextMessage: { text: 'PIN: 🍎' } } } };
      const [m] = accepted(normaliseWebhook(body)).messages;
      expect(m).to.include({ provider: 'evolution', phone: '+5511999998888', text: 'PIN: 🍎', displayName: 'Test Person' });
    });

    it('takes the phone of an @lid sender from senderPn (Evolution before 2.3), and of a linked device from its JID', function () {
      const lid = evolutionMessage({ text: 'PIN: 🍎', remoteJid: '99887766554433@lid' }) as { data: { key: Obj } };
      lid.data.key.senderPn = '447700900123@s.whatsapp.net';
      expect(accepted(normaliseWebhook(lid)).messages[0]!.phone).to.equal('+447700900123');
      const device = evolutionMessage({ text: 'PIN: 🍎', remoteJid: '447700900123:12@s.whatsapp.net' });
      expect(accepted(normaliseWebhook(device)).messages[0]!.phone).to.equal('+447700900123');
    });

    it('scopes message ids by instance, and derives a stable one when key.id is missing', function () {
      const a = evolutionMessage({ text: 'PIN: 🍎', id: 'SAME', instance: 'one' });
      const b = evolutionMessage({ text: 'PIN: 🍎', id: 'SAME', instance: 'two' });
      expect(accepted(normaliseWebhook(a)).messages[0]!.id).to.not.equal(accepted(normaliseWebhook(b)).messages[0]!.id);
      const noId = evolutionMessage({ text: 'PIN: 🍎' }) as { data: { key: Obj } };
      delete noId.data.key.id;
      const first = accepted(normaliseWebhook(noId)).messages[0]!.id;
      expect(accepted(normaliseWebhook(structuredClone(noId))).messages[0]!.id).to.equal(first);
    });

    it('does not take a text that reads like an ignore reason for one', function () {
      const [m] = accepted(normaliseWebhook(evolutionMessage({ text: 'media' }))).messages;
      expect(m!.text).to.equal('media');
    });
  });

  describe('WhatsApp Cloud API', function () {
    it('identifier changes: the old identifiers find the account, the new number and BSUID are what it takes', function () {
      const system = (m: Obj) =>
        accepted(normaliseWebhook(cloudValue({ metadata: { phone_number_id: '2222222222' }, messages: [{ id: 'wamid.S1', type: 'system', ...m }] })));
      const number = system({
        from: '447700900123',
        from_user_id: 'GB.111',
        system: { type: 'user_changed_number', wa_id: '447700900456', user_id: 'GB.222', previous_user_id: 'GB.111' },
      });
      expect(number.messages[0]).to.include({
        phone: '+447700900456',
        previousPhone: '+447700900123',
        userId: 'GB.111',
        newUserId: 'GB.222',
        numberChanged: true,
        text: null,
      });
      const bsuid = system({ from_user_id: 'GB.111', system: { type: 'user_changed_user_id', user_id: 'GB.222', previous_user_id: 'GB.111' } });
      expect(bsuid.messages[0]).to.include({ phone: null, userId: 'GB.111', newUserId: 'GB.222', numberChanged: true });
      // the new BSUID in from_user_id, the old one only in previous_user_id
      const other = system({ from_user_id: 'GB.222', system: { type: 'user_changed_user_id', previous_user_id: 'GB.111' } });
      expect(other.messages[0]).to.include({ userId: 'GB.111', newUserId: 'GB.222' });
      // a change naming nothing new, or no old identifier, moves nothing
      expect(system({ from_user_id: 'GB.111', system: { type: 'user_changed_user_id' } }).ignored).to.deep.equal(['not-text']);
      expect(system({ system: { type: 'user_changed_number', wa_id: '447700900456', user_id: 'GB.222' } }).ignored).to.deep.equal(['not-text']);
    });

    it('keeps the good messages of a batch, a sender whose phone is withheld (BSUID only) included, and ignores an odd item', function () {
      const good = (cloudMessage({ text: 'PIN: 🍎', phone: '+15551230001', id: 'wamid.GOOD', name: 'Ana Lima' }) as { entry: { changes: { value: Obj }[] }[] })
        .entry[0]!.changes[0]!.value;
      const body = cloudValue({
        contacts: [{ profile: { name: 'Someone Else' }, user_id: 'US.13491208655302741918' }, ...(good.contacts as Obj[])],
        messages: [
          { from_user_id: 'US.13491208655302741918', id: 'wamid.BSUID', timestamp: '1', type: 'text', text: { body: 'PIN: 🍎' } },
          'garbage',
          ...(good.messages as Obj[]),
        ],
      });
      const n = accepted(normaliseWebhook(body));
      expect(n.ignored).to.deep.equal(['malformed']);
      expect(n.messages).to.have.length(2);
      expect(n.messages[0]).to.include({ provider: 'cloud', phone: null, userId: 'US.13491208655302741918', displayName: 'Someone Else', text: 'PIN: 🍎' });
      expect(n.messages[1]).to.include({ provider: 'cloud', phone: '+15551230001', displayName: 'Ana Lima', text: 'PIN: 🍎' });
    });

    it('describes failed deliveries of ours, 131047 as the 24-hour window', function () {
      const n = accepted(
        normaliseWebhook(
          cloudValue({
            statuses: [
              { id: 'wamid.A', status: 'failed', recipient_id: '15551230001', errors: [{ code: 131047, title: 'Re-engagement message' }] },
              { id: 'wamid.B', status: 'read', recipient_id: '15551230001' },
            ],
          }),
        ),
      );
      expect(n.messages).to.deep.equal([]);
      expect(n.ignored).to.deep.equal(['status-update']);
      expect(n.deliveryFailures).to.have.length(1);
      expect(n.deliveryFailures[0]).to.include('24-hour customer service window');
    });

    it('ignores other webhook fields and other Meta products; refuses a notification without entries', function () {
      expect(accepted(normaliseWebhook(cloudValue({ event: 'APPROVED' }, 'message_template_status_update'))).ignored).to.deep.equal(['event-kind']);
      expect(accepted(normaliseWebhook({ object: 'page', entry: [] })).ignored).to.deep.equal(['event-kind']);
      expect(normaliseWebhook({ object: 'whatsapp_business_account', entry: {} }).kind).to.equal('invalid');
    });
  });

  it('phones: digits of a user JID or a Cloud id; nothing from privacy ids, groups or junk', function () {
    expect(phoneFromJid('5511987654321@s.whatsapp.net')).to.equal('+5511987654321');
    expect(phoneFromJid('5511987654321')).to.equal('+5511987654321');
    for (const jid of ['123@lid', '120363025246125486@g.us', '12345@s.whatsapp.net', 'abc@s.whatsapp.net', '', null]) {
      expect(phoneFromJid(jid), String(jid)).to.equal(null);
    }
  });

  it('backoff: Retry-After (seconds or a date) when given, else exponential with jitter', function () {
    expect(parseRetryAfter('7')).to.equal(7000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).to.be.within(3000, 5000);
    expect(parseRetryAfter('soon')).to.equal(undefined);
    const limited = new ProviderError('429', true, 2000, 429);
    for (let i = 0; i < 20; i++) expect(outboundBackoff(1, limited)).to.be.within(2000, 2250);
    for (let i = 0; i < 20; i++) {
      expect(outboundBackoff(1, new Error('x'))).to.be.within(500, 1000);
      expect(outboundBackoff(4, new Error('x'))).to.be.within(4000, 8000);
      expect(outboundBackoff(30, new Error('x'))).to.be.within(150_000, 300_000);
    }
  });
});
