import { expect } from 'chai';
import { AppError, redisFault, toAppError } from '../../../src/errors.js';

/** Redis' own refusal texts (as ioredis and rate-limiter-flexible surface them) map to one fault each. */
describe('core unit: Redis faults and IP groups', function () {
  const cases: [string, string][] = [
    ['OOM command not allowed when used memory > \'maxmemory\'.', 'out-of-memory'],
    ['EXECABORT Transaction discarded because of previous errors.', 'out-of-memory'],
    ["READONLY You can't write against a read only replica.", 'read-only'],
    ['LOADING Redis is loading the dataset in memory', 'loading'],
    ['MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.', 'persistence-failing'],
    ['BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.', 'busy'],
    ['Command timed out', 'timeout'],
    ['Stream isn\'t writeable and enableOfflineQueue options is false', 'unreachable'],
    ['connect ECONNREFUSED 127.0.0.1:6379', 'unreachable'],
  ];
  for (const [message, fault] of cases) {
    it(`"${message.slice(0, 40)}…" is ${fault}: 503 with Retry-After`, function () {
      expect(redisFault(new Error(message))).to.equal(fault);
      const err = toAppError(new Error(message));
      expect(err.code).to.equal('NETWORK_ERROR');
      expect(err.status).to.equal(503);
      expect(err.retryAfter).to.be.at.least(1);
      expect(err.toBody().message).not.to.include(message.slice(0, 10));
    });
  }

  it('anything else is 500 INTERNAL_ERROR; every NETWORK_ERROR has a Retry-After', function () {
    expect(toAppError(new TypeError('x is undefined')).code).to.equal('INTERNAL_ERROR');
    expect(redisFault('OOM')).to.equal(null);
    expect(new AppError('NETWORK_ERROR').retryAfter).to.equal(1);
    expect(new AppError('FORBIDDEN').retryAfter).to.equal(undefined);
  });

});
