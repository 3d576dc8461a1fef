import { expect } from 'chai';
import { ACTIVE_BUCKETS, keys } from '../../src/redis/keys.js';
import { scriptLibrary } from '../../src/redis/scripts.js';
import { testRedis } from '../helpers/redis.js';

/**
 * The scripts that still build their keys from the prefix do it with lib/keys.lua: it must build
 * exactly the keys of keys.ts, or a script and the TypeScript side would read different keys.
 * Read-only: the script only returns strings.
 */
describe('redis: one key schema in TypeScript and in Lua', function () {
  it('lib/keys.lua builds the keys of keys.ts, and the same active bucket', async function () {
    const redis = testRedis();
    try {
      const hashes = ['AAAAAAAAAAAAAAAAAAAAAA', 'Zz09-_', '_x', '-y', 'q1w2e3', '9zzz'];
      const lua = `${scriptLibrary('keys.lua')}
local p, h = ARGV[1], ARGV[2]
return { K.reg(p, h), K.emo(p, 'e1'), K.active_of(p, h), K.user(p, 'u1'), K.phone(p, '+31'), K.confirm(p, '+31'),
  K.sess(p, 'u1', 's1'), K.usess(p, 'u1'), K.rot(p, 'u1', 's1'), K.msg(p, 'm1'), K.out(p, 'j1'),
  K.outgw(p, 'cloud', 'g1'), K.outst(p, 'cloud', 'g1') }`;
      const buckets = new Set<number>();
      for (const h of hashes) {
        const k = keys('pfx');
        const b = k.activeBucket(h);
        buckets.add(b);
        expect(b).to.be.within(0, ACTIVE_BUCKETS - 1);
        const got = (await redis.eval(lua, 0, 'pfx', h)) as string[];
        expect(got).to.deep.equal([
          k.registration(h),
          k.emoji('e1'),
          k.active(b),
          k.user('u1'),
          k.userByPhone('+31'),
          k.confirmation('+31'),
          k.session('u1', 's1'),
          k.userSessions('u1'),
          k.rotation('u1', 's1'),
          k.message('m1'),
          k.outbound('j1'),
          k.outboundByGateway('cloud', 'g1'),
          k.outboundEarly('cloud', 'g1'),
        ]);
      }
      expect(buckets.size, 'hashes spread over buckets').to.be.greaterThan(3);
    } finally {
      redis.disconnect();
    }
  });
});
