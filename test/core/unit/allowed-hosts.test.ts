import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { hostAllowed } from '../../../src/allowed-hosts.js';

const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), WEBHOOK_SECRET: 'w'.repeat(32) };

/** HOST (where the web server listens) and ALLOWED_HOSTS (which Host headers it answers). */
describe('security unit: HOST and ALLOWED_HOSTS', function () {
  it('HOST: loopback outside production, every interface in production, as given otherwise', function () {
    expect(loadConfig({}).host).to.equal('127.0.0.1');
    expect(loadConfig({ NODE_ENV: 'test' }).host).to.equal('127.0.0.1');
    expect(loadConfig(PRODUCTION).host).to.equal(undefined);
    expect(loadConfig({ HOST: '0.0.0.0' }).host).to.equal('0.0.0.0');
    expect(loadConfig({ ...PRODUCTION, HOST: '10.1.2.3' }).host).to.equal('10.1.2.3');
    expect(loadConfig({ HOST: '[::1]' }).host).to.equal('::1');
    expect(loadConfig({ HOST: 'localhost' }).host).to.equal('localhost');
    for (const bad of ['http://0.0.0.0', '0.0.0.0:3000', 'a b', '-x']) {
      expect(() => loadConfig({ HOST: bad }), bad).to.throw(ConfigError, /^HOST must be an IP address or a host name/);
    }
  });

  it('ALLOWED_HOSTS: lower-cased names, none by default; a scheme or a port is refused', function () {
    expect(loadConfig({}).allowedHosts).to.deep.equal([]);
    expect(loadConfig({ ALLOWED_HOSTS: ' Auth.Example.com, localhost ,' }).allowedHosts).to.deep.equal(['auth.example.com', 'localhost']);
    for (const bad of ['https://auth.example.com', 'auth.example.com:443', '*.example.com']) {
      expect(() => loadConfig({ ALLOWED_HOSTS: bad }), bad).to.throw(ConfigError, /^ALLOWED_HOSTS must list host names/);
    }
  });

  it('hostAllowed: a listed name with or without port, any case; an address; no Host; an empty list takes all', function () {
    const listed = new Set(['auth.example.com', 'localhost']);
    for (const host of [
      'auth.example.com',
      'auth.example.com:8443',
      'AUTH.example.COM',
      'auth.example.com.',
      'localhost:3000',
      '127.0.0.1:3000',
      '10.0.0.7',
      '[::1]:3000',
      '[2001:db8::1]',
      undefined,
      '',
    ]) {
      expect(hostAllowed(host, listed), String(host)).to.equal(true);
    }
    for (const host of [
      'evil.example',
      'evil.example:3000',
      'auth.example.com.evil.example',
      'xauth.example.com',
      'auth.example',
      'localhost.evil.example:3000',
    ]) {
      expect(hostAllowed(host, listed), host).to.equal(false);
    }
    expect(hostAllowed('evil.example', new Set())).to.equal(true);
  });
});
