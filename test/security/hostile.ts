import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

/**
 * Generators of hostile request bodies, as JSON *text* built by hand: that way a body can hold
 * what JSON.stringify of a JS object never gives (own `__proto__` keys, duplicate keys, nesting
 * deeper than the stack, truncated or non-UTF-8 bytes) and what it escapes (lone surrogates).
 */
const ODD_CHARS = [
  '\uD800',
  '\uDBFF',
  '\uDC00',
  '\uDFFF',
  '\u0000',
  '\u202E',
  '\uFEFF',
  '\uFE0F',
  '\u200D',
  '\n',
  '"',
  '\\',
  'a',
  '7',
  ' ',
  '🍎',
  '🇧🇷',
  '1️⃣',
  '❤',
];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...ODD_CHARS), { maxLength: 24 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: fc.stringMatching(/^[\x21-\x7E]{1,16}$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^\+?[0-9]{0,17}$/) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 500, max: 20000 }), fc.constantFrom('x', '🍎', '\u0000', '\uD800')).map(([n, c]) => c.repeat(n)) },
);

/** Arrays or objects nested up to `maxDepth` levels, as text (deeper than JSON.stringify can write). */
export const deepText = (maxDepth = 6000): fc.Arbitrary<string> =>
  fc
    .tuple(fc.integer({ min: 50, max: maxDepth }), fc.constantFrom('array', 'object'))
    .map(([depth, kind]) => (kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`));

const leafText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 4, arbitrary: hostileString.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: deepText() },
  { weight: 1, arbitrary: fc.constantFrom('1e309', '-0', '123456789012345678901234567890', 'true', 'null', '[]', '{}') },
);

/** An object whose keys are the endpoint's own fields, prototype names and noise, values hostile. */
export function objectText(fields: readonly string[], valueText: fc.Arbitrary<string> = leafText): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...fields) },
    { weight: 2, arbitrary: fc.constantFrom(...PROTO_KEYS) },
    { weight: 1, arbitrary: hostileString },
  );
  const value = fc.oneof({ weight: 4, arbitrary: valueText }, { weight: 1, arbitrary: fc.array(fc.tuple(key, leafText), { maxLength: 3 }).map(pairsToText) });
  return fc.array(fc.tuple(key, value), { maxLength: 6 }).map(pairsToText);
}

function pairsToText(pairs: Array<[string, string]>): string {
  return `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

/** A whole body: mostly objects aimed at the endpoint, plus anything else JSON or not. */
export function bodyText(fields: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: objectText(fields) },
    { weight: 2, arbitrary: leafText },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'null', '{', '{"pin":', '[1,', '{"a":1}}', 'undefined', "{'pin':'abcd'}") },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    { weight: 1, arbitrary: fc.integer({ min: 16 * 1024 - 64, max: 64 * 1024 }).map((n) => JSON.stringify({ pin: 'a'.repeat(n) })) },
  );
}

/** How the bytes go out: as UTF-8, or with a byte that is never valid UTF-8 or a raw NUL spliced in. */
export const corruption = fc.oneof(
  { weight: 6, arbitrary: fc.constant<null>(null) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(0xff, 0xc0, 0x00, 0x80), fc.nat()) },
);

export function toBytes(text: string, corrupt: [number, number] | null): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  if (!corrupt) return bytes;
  const at = bytes.length === 0 ? 0 : corrupt[1] % bytes.length;
  return Buffer.concat([bytes.subarray(0, at), Buffer.from([corrupt[0]]), bytes.subarray(at)]);
}

/** A Content-Encoding and what it does to the bytes: honest compression, a lie, or nonsense. */
export type Encoding = 'none' | 'gzip' | 'deflate' | 'br' | 'gzip-lie' | 'deflate-lie' | 'identity' | 'nonsense';
export const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 10, arbitrary: fc.constant<Encoding>('none') },
  { weight: 2, arbitrary: fc.constantFrom<Encoding>('gzip', 'deflate', 'br', 'gzip-lie', 'deflate-lie', 'identity', 'nonsense') },
);

export function encode(bytes: Buffer, how: Encoding): { body: Buffer; header?: string } {
  switch (how) {
    case 'none':
      return { body: bytes };
    case 'gzip':
      return { body: gzipSync(bytes), header: 'gzip' };
    case 'deflate':
      return { body: deflateSync(bytes), header: 'deflate' };
    case 'br':
      return { body: brotliCompressSync(bytes), header: 'br' };
    case 'gzip-lie':
      return { body: bytes, header: 'gzip' };
    case 'deflate-lie':
      return { body: bytes, header: 'deflate' };
    case 'identity':
      return { body: bytes, header: 'identity' };
    case 'nonsense':
      return { body: bytes, header: 'x-nonsense, gzip' };
  }
}

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=nonsense',
      'application/vnd.api+json',
      'application/jsonx',
      'application/xml',
      '*/*',
    ),
  },
);

/** Evolution API's event shape with every part replaceable by something hostile. */
export const evolutionText: fc.Arbitrary<string> = (() => {
  const jid = fc.oneof(
    fc.stringMatching(/^[0-9]{5,16}@(s\.whatsapp\.net|g\.us|lid|broadcast|c\.us)$/),
    fc.stringMatching(/^[0-9]{5,16}@s\.whatsapp\.net$/),
    hostileString.map((s) => `${s}@s.whatsapp.net`),
    hostileString,
  );
  // mostly the right type, so many bodies get past validation into the normaliser and the worker
  const maybe = (a: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.oneof({ weight: 8, arbitrary: a }, { weight: 1, arbitrary: leafText });
  const str = (a: fc.Arbitrary<string>): fc.Arbitrary<string> => a.map((s) => JSON.stringify(s));
  const key = fc
    .record(
      {
        remoteJid: maybe(str(jid)),
        fromMe: maybe(fc.constantFrom('false', 'false', 'false', 'true')),
        id: maybe(str(hostileString)),
        remoteJidAlt: maybe(str(jid)),
      },
      { requiredKeys: ['remoteJid', 'fromMe'] },
    )
    .map((r) => pairsToText(Object.entries(r)));
  const message = fc
    .record(
      {
        conversation: maybe(str(hostileString)),
        extendedTextMessage: maybe(fc.record({ text: maybe(str(hostileString)) }).map((r) => pairsToText(Object.entries(r)))),
      },
      { requiredKeys: ['conversation'] },
    )
    .map((r) => pairsToText(Object.entries(r)));
  const data = fc
    .record({ key: maybe(key), message: maybe(message), pushName: maybe(str(hostileString)), extra: deepText(60000) }, { requiredKeys: ['key', 'message'] })
    .map((r) => pairsToText(Object.entries(r)));
  return fc
    .record(
      {
        event: maybe(fc.constantFrom('"messages.upsert"', '"messages.upsert"', '"MESSAGES_UPSERT"', '"connection.update"')),
        instance: maybe(str(hostileString)),
        data: maybe(data),
      },
      { requiredKeys: ['event', 'instance', 'data'] },
    )
    .map((r) => pairsToText(Object.entries(r)));
})();

/** The WhatsApp Cloud API notification shape, likewise. */
export const cloudText: fc.Arbitrary<string> = fc
  .record({
    from: fc.oneof(fc.stringMatching(/^[0-9]{5,16}$/), hostileString),
    id: hostileString,
    type: fc.constantFrom('text', 'image', 'x'),
    body: hostileString,
    name: hostileString,
    extra: leafText,
  })
  .map(
    (m) =>
      `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"contacts":[{"profile":{"name":${JSON.stringify(m.name)}},"wa_id":${JSON.stringify(m.from)}}],` +
      `"messages":[{"from":${JSON.stringify(m.from)},"id":${JSON.stringify(m.id)},"type":${JSON.stringify(m.type)},"text":{"body":${JSON.stringify(m.body)}},"x":${m.extra}}],"statuses":${m.extra}}}]}]}`,
  );
