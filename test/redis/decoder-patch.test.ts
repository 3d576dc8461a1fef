import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import decoderModule from 'ioredis/built/resp/decoder.js';
import { unprivate } from '../../scripts/patches/unprivate-fields.js';

const require = createRequire(import.meta.url);
const { Decoder } = decoderModule;

type Event = ['reply' | 'push', unknown] | ['error', string];

/** Every reply, error and push the decoder reads from these chunks, in order. */
function decode(chunks: Buffer[]): Event[] {
  const events: Event[] = [];
  const decoder = new Decoder({
    onReply: (reply: unknown) => events.push(['reply', reply]),
    onErrorReply: (err: Error) => events.push(['error', err.message]),
    onPush: (push: unknown[]) => events.push(['push', push]),
    getTypeMapping: () => ({}),
  });
  for (const chunk of chunks) decoder.write(chunk);
  return events;
}

/** RESP2 and RESP3 replies and what the decoder makes of each (no type mapping: its defaults). */
const CASES: Array<[string, Event[]]> = [
  ['+OK\r\n', [['reply', 'OK']]],
  ['-ERR wrong\r\n', [['error', 'ERR wrong']]],
  [':-42\r\n', [['reply', -42]]],
  ['$5\r\nhello\r\n', [['reply', 'hello']]],
  ['$0\r\n\r\n', [['reply', '']]],
  ['$-1\r\n', [['reply', null]]],
  ['*-1\r\n', [['reply', null]]],
  ['*0\r\n', [['reply', []]]],
  ['*3\r\n:1\r\n*2\r\n$1\r\na\r\n_\r\n+b\r\n', [['reply', [1, ['a', null], 'b']]]],
  ['#t\r\n#f\r\n', [['reply', true], ['reply', false]]],
  [',3.25\r\n,-1.5e3\r\n', [['reply', 3.25], ['reply', -1500]]],
  ['(12345678901234567890\r\n', [['reply', 12345678901234567890n]]],
  ['%2\r\n+k\r\n:1\r\n$2\r\nk2\r\n*1\r\n#f\r\n', [['reply', { k: 1, k2: [false] }]]],
  ['~2\r\n:1\r\n:2\r\n', [['reply', [1, 2]]]],
  ['=8\r\ntxt:abcd\r\n', [['reply', 'abcd']]],
  ['!9\r\nERR blob!\r\n', [['error', 'ERR blob!']]],
  ['>2\r\n$7\r\nmessage\r\n+x\r\n', [['push', [Buffer.from('message'), 'x']]]],
];

/**
 * patches/ioredis+6.0.0.patch rewrites ioredis's RESP decoder so that its private members are
 * ordinary properties (scripts/patches/unprivate-fields.ts; docs/benchmark.md has the counts).
 * These checks fail if npm did not apply it, or if the rewrite changed what the decoder reads,
 * including replies split anywhere across socket reads (the decoder's continuation paths).
 */
describe('ioredis decoder patch', function () {
  it('is installed: the decoder npm installed is the rewrite of itself, with no private-member helper left on `this`', function () {
    expect(require('ioredis/package.json').version, 'the version the patch is for').to.equal('6.0.0');
    const installed = readFileSync(require.resolve('ioredis/built/resp/decoder.js'), 'utf8');
    expect(installed).not.to.include('__classPrivateFieldGet(this');
    expect(installed).not.to.include('__classPrivateFieldSet(this');
    expect(unprivate(installed)).to.equal(installed);
  });

  it('rewrites private fields and methods reached through `this`, and leaves other receivers alone', function () {
    const compiled = [
      'constructor() {',
      '    _C_instances.add(this);',
      '    _C_n.set(this, 0);',
      '}',
      'f(x) { return __classPrivateFieldGet(this, _C_instances, "m", _C_g).call(this, x, "a,(b"); }',
      'h() { __classPrivateFieldSet(this, _C_n, __classPrivateFieldGet(this, _C_n, "f") + 1, "f"); }',
      'k() { return __classPrivateFieldGet(_a, _a, "f", _C_TABLE)[0]; }',
    ].join('\n');
    expect(unprivate(compiled)).to.equal(
      [
        'constructor() {',
        '    this._C_n = 0;',
        '}',
        'f(x) { return _C_g.call(this, x, "a,(b"); }',
        'h() { (this._C_n = this._C_n + 1); }',
        'k() { return __classPrivateFieldGet(_a, _a, "f", _C_TABLE)[0]; }',
      ].join('\n'),
    );
  });

  it('refuses a kind of private member it does not rewrite (an accessor) instead of miscompiling it', function () {
    expect(() => unprivate('x = __classPrivateFieldGet(this, _C_instances, "a", _C_get_y);')).to.throw(/kind "a"/);
  });

  it('decodes every RESP2 and RESP3 type whole, split at every byte, and byte by byte', function () {
    for (const [text, expected] of CASES) {
      const bytes = Buffer.from(text);
      expect(decode([bytes]), JSON.stringify(text)).to.deep.equal(expected);
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(decode([bytes.subarray(0, cut), bytes.subarray(cut)]), `${JSON.stringify(text)} cut at ${cut}`).to.deep.equal(expected);
      }
      expect(decode([...bytes].map((b) => Buffer.from([b]))), `${JSON.stringify(text)} byte by byte`).to.deep.equal(expected);
    }
  });

  it('decodes many replies in one read, as a pipelined answer arrives', function () {
    const all = Buffer.from(CASES.map(([text]) => text).join(''));
    expect(decode([all])).to.deep.equal(CASES.flatMap(([, expected]) => expected));
  });
});
