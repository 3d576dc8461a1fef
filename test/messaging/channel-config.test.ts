import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

const EVO = { EVOLUTION_API_URL: 'http://evolution.local', EVOLUTION_API_KEY: 'k' };
const CLOUD = { WHATSAPP_TOKEN: 't' };

/** The channel configuration: simple for one gateway, unchanged variables, lists for more. */
describe('messaging: channel configuration', function () {
  it('no gateway: the log channel', function () {
    const c = loadConfig({});
    expect(c).to.deep.include({ messagingProvider: 'log', gateways: [], channels: ['log'], defaultChannel: 'log' });
  });

  it("one gateway with today's variables: one channel, the default", function () {
    const evo = loadConfig({ ...EVO, MESSAGING_PROVIDER: 'evolution', EVOLUTION_INSTANCE: 'main' });
    expect(evo).to.deep.include({ messagingProvider: 'evolution', channels: ['evolution:main'], defaultChannel: 'evolution:main' });
    expect(evo.evolution).to.deep.include({ instance: 'main', instances: ['main'], apiVersion: 'v2' });
    const cloud = loadConfig({ ...CLOUD, MESSAGING_PROVIDER: 'cloud', WHATSAPP_PHONE_NUMBER_ID: '106540352242922' });
    expect(cloud).to.deep.include({ channels: ['cloud:106540352242922'], defaultChannel: 'cloud:106540352242922' });
    expect(cloud.cloud.phoneNumberId).to.equal('106540352242922');
  });

  it("WHATSAPP_NUMBERS names each channel's number; without it WHATSAPP_NUMBER is the default channel's; a bad pair is refused", function () {
    const env = { ...EVO, ...CLOUD, MESSAGING_PROVIDER: 'evolution,cloud', EVOLUTION_INSTANCE: 'a', WHATSAPP_PHONE_NUMBER_IDS: '1,2' };
    expect(loadConfig(env).demo.numbers).to.deep.equal({});
    expect(loadConfig({ ...env, WHATSAPP_NUMBER: '+1 555 000 1111' }).demo.numbers).to.deep.equal({ 'evolution:a': '15550001111' });
    const c = loadConfig({ ...env, WHATSAPP_NUMBERS: 'evolution:a=+15550001111, cloud:2=+44 7700 900123' });
    expect(c.demo.numbers).to.deep.equal({ 'evolution:a': '15550001111', 'cloud:2': '447700900123' });
    for (const bad of ['cloud:3=+15550001111', 'evolution:a', 'evolution:a=12', 'log=+15550001111']) {
      expect(() => loadConfig({ ...env, WHATSAPP_NUMBERS: bad }), bad).to.throw(ConfigError, /WHATSAPP_NUMBERS/);
    }
  });

  it('both gateways, several instances and numbers; DEFAULT_CHANNEL picks the default', function () {
    const env = {
      ...EVO,
      ...CLOUD,
      MESSAGING_PROVIDER: 'evolution, cloud',
      EVOLUTION_INSTANCE: 'a',
      EVOLUTION_INSTANCES: 'a,b',
      WHATSAPP_PHONE_NUMBER_IDS: '1,2',
      EVOLUTION_API_VERSION: 'v1',
    };
    const c = loadConfig(env);
    expect(c.channels).to.deep.equal(['evolution:a', 'evolution:b', 'cloud:1', 'cloud:2']);
    expect(c.defaultChannel).to.equal('evolution:a');
    expect(c.evolution.apiVersion).to.equal('v1');
    const d = loadConfig({ ...env, DEFAULT_CHANNEL: 'cloud:2' });
    expect(d.channels).to.deep.equal(['cloud:2', 'evolution:a', 'evolution:b', 'cloud:1']);
    expect(d.defaultChannel).to.equal('cloud:2');
  });

  it('refuses what cannot work, with one line', function () {
    const bad: Record<string, string>[] = [
      { MESSAGING_PROVIDER: 'log,cloud', ...CLOUD, WHATSAPP_PHONE_NUMBER_ID: '1' },
      { MESSAGING_PROVIDER: 'telegram' },
      { MESSAGING_PROVIDER: 'evolution', ...EVO },
      { MESSAGING_PROVIDER: 'cloud', ...CLOUD },
      { MESSAGING_PROVIDER: 'cloud', ...CLOUD, WHATSAPP_PHONE_NUMBER_IDS: '1,abc' },
      { MESSAGING_PROVIDER: 'evolution', ...EVO, EVOLUTION_INSTANCE: 'a', EVOLUTION_API_VERSION: 'v3' },
      { MESSAGING_PROVIDER: 'evolution', ...EVO, EVOLUTION_INSTANCE: 'a', DEFAULT_CHANNEL: 'evolution:b' },
      { WEBHOOK_BEARER_KEY: 'short' },
      { WEBHOOK_PATH_SECRET: 'has/slash-and-is-long-enough' },
    ];
    for (const env of bad) expect(() => loadConfig(env), JSON.stringify(env)).to.throw(ConfigError);
  });
});
