import { expect } from 'chai';
import { AppError, redisFault, toAppError } from '../../../src/errors.js';

/** Redis' own refusal texts (as ioredis and rate-limiter-flexible surface them) map to one fault each. */
describe('core unit: Redis faults and IP groups', function () {
  const cases: [string, string][] = [
    ["OOM command not allowed when used memory > 'maxmemory'.", 'out-of-memory'],
    ['EXECABORT Transaction discarded because of previous errors.', 'out-of-memory'],
    ["READONLY You can't write against a read only replica.", 'read-only'],
    ['LOADING Redis is loading the dataset in memory', 'loading'],
    ['MISCONF Redis is configured to save RDB snapshots, but it is currently not able to persist on disk.', 'persistence-failing'],
    ['BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.', 'busy'],
    ['Command timed out', 'timeout'],
    ["Stream isn't writeable and enableOfflineQueue options is false", 'unreachable'],
    ['connect ECONNREFUSED 127.0.0.1:6379', 'unreachable'],
    // a cluster primary failing over, as ioredis' Cluster reports it
    ['Too many Cluster redirections. Last error: Error: Connection is closed.', 'busy'],
    ['CLUSTERDOWN The cluster is down', 'busy'],
    ['TRYAGAIN Multiple keys request during rehashing of slot', 'busy'],
    ["Cluster isn't ready and enableOfflineQueue options is false", 'unreachable'],
    ['None of startup nodes is available', 'unreachable'],
    ['Failed to refresh slots cache.', 'unreachable'],
    ['Command aborted due to connection close', 'unreachable'],
    // the request path's connection gives up at once (maxRetriesPerRequest 0)
    ['Reached the max retries per request limit (which is 0). Refer to "maxRetriesPerRequest" option for details.', 'unreachable'],
    // TLS (rediss://) torn down mid-handshake or mid-command
    ['Client network socket disconnected before secure TLS connection was established', 'unreachable'],
    ['read ECONNRESET', 'unreachable'],
    ["Socket timeout. Expecting data, but didn't receive any in 2000ms.", 'timeout'],
    ['NOREPLICAS Not enough good replicas to write.', 'read-only'],
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

  it("a fault wrapped in a cause, an AggregateError, a cluster's lastNodeError or our own 503 is found; an error code alone suffices", function () {
    expect(redisFault(new Error('job failed', { cause: new Error('OOM command not allowed') }))).to.equal('out-of-memory');
    expect(redisFault(new AggregateError([new Error('x'), Object.assign(new Error(''), { code: 'ECONNREFUSED' })], ''))).to.equal('unreachable');
    expect(redisFault(Object.assign(new Error('Failed'), { lastNodeError: new Error('LOADING Redis is loading') }))).to.equal('loading');
    expect(redisFault(Object.assign(new Error('tls'), { code: 'ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC' }))).to.equal('unreachable');
    expect(redisFault(new AppError('NETWORK_ERROR', 'replicas', { cause: new Error('NOREPLICAS 0 of 1') }))).to.equal('read-only');
    // a 503 of ours that is not Redis' doing, and a 4xx, are not Redis faults
    expect(redisFault(new AppError('NETWORK_ERROR', 'The user changed'))).to.equal(null);
    expect(redisFault(new AppError('PIN_NOT_FOUND'))).to.equal(null);
  });

  it('anything else is 500 INTERNAL_ERROR; every NETWORK_ERROR has a Retry-After', function () {
    expect(toAppError(new TypeError('x is undefined')).code).to.equal('INTERNAL_ERROR');
    expect(redisFault('OOM')).to.equal(null);
    expect(new AppError('NETWORK_ERROR').retryAfter).to.equal(1);
    expect(new AppError('FORBIDDEN').retryAfter).to.equal(undefined);
  });
});
