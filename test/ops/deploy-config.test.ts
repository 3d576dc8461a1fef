import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { CORE_SCHEMA, load as loadYaml, mergeTag } from 'js-yaml';
import { loadConfig, type MessagingProviderName } from '../../src/config.js';
import { parseComposeEnvFile } from '../helpers/env-file.js';
import { ROOT } from '../helpers/processes.js';
import { configVariables, interpolate } from './config-vars.js';

const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

/** Set by the platform, never by a person: Heroku's dyno name and its TLS Redis URL. */
const PLATFORM_ONLY = ['DYNO', 'REDIS_TLS_URL'];

interface ComposeService {
  environment?: Record<string, string | number | boolean>;
}
const compose = (): Record<string, ComposeService> =>
  (loadYaml(read('docker-compose.yml'), { schema: CORE_SCHEMA.withTags(mergeTag) }) as { services: Record<string, ComposeService> }).services;

/** What each provider needs from the person deploying, beside the secrets. */
const PROVIDER_ENV: Record<MessagingProviderName, Record<string, string>> = {
  log: {},
  evolution: { EVOLUTION_API_URL: 'https://evo.example.com', EVOLUTION_API_KEY: 'k', EVOLUTION_INSTANCE: 'main' },
  cloud: { WHATSAPP_TOKEN: 't', WHATSAPP_PHONE_NUMBER_ID: '1234', GRAPH_API_URL: 'https://graph.example.com/v21.0', CORS_ORIGINS: 'https://app.example.com' },
};
const SECRETS = { JWT_SECRET: 'x'.repeat(40), WEBHOOK_SECRET: 'w'.repeat(32), WHATSAPP_NUMBER: '+15551234567' };

describe('ops: compose, .env.example and app.json against the config module', function () {
  const vars = configVariables();

  it('finds the variables config.ts reads (sanity of the recorder)', function () {
    expect(vars).to.include.members(['JWT_SECRET', 'MESSAGING_PROVIDER', 'WHATSAPP_TOKEN', 'GRAPH_API_URL', 'CORS_ORIGINS', 'DEMO_PAGE']);
    expect(vars.length).to.be.greaterThan(40);
  });

  it('compose passes every variable to every web node and worker (PORT to web nodes only)', function () {
    const services = compose();
    for (const [name, svc] of Object.entries(services)) {
      if (!/^(web|worker)\d$/.test(name)) continue;
      const expected = vars.filter((v) => !PLATFORM_ONLY.includes(v) && (name.startsWith('web') || v !== 'PORT'));
      const missing = expected.filter((v) => !(v in (svc.environment ?? {})));
      expect(missing, `${name} lacks`).to.deep.equal([]);
      const unknown = Object.keys(svc.environment ?? {}).filter((v) => !vars.includes(v));
      expect(unknown, `${name} sets variables config.ts never reads`).to.deep.equal([]);
    }
  });

  for (const provider of Object.keys(PROVIDER_ENV) as MessagingProviderName[]) {
    it(`compose starts the ${provider} provider: its environment, interpolated, loads`, function () {
      const shell = { ...SECRETS, MESSAGING_PROVIDER: provider, ...PROVIDER_ENV[provider] };
      for (const name of ['web1', 'worker1']) {
        const raw = compose()[name]!.environment!;
        const env = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, interpolate(String(v), shell)]));
        const config = loadConfig(env);
        expect(config.production).to.equal(true);
        expect(config.messagingProvider).to.equal(provider);
        expect(config.redisUrl).to.equal('redis://redis:6379');
        expect(config.demo.whatsappNumber).to.equal('15551234567');
        if (provider === 'cloud') {
          expect(config.cloud).to.deep.include({ token: 't', phoneNumberId: '1234', graphApiUrl: 'https://graph.example.com/v21.0' });
          expect(config.corsOrigins).to.deep.equal(['https://app.example.com']);
        }
        if (provider === 'evolution') expect(config.evolution.instance).to.equal('main');
      }
    });
  }

  it('compose refuses to start without JWT_SECRET', function () {
    const raw = compose().web1!.environment!;
    expect(() => interpolate(String(raw.JWT_SECRET), {})).to.throw(/JWT_SECRET/);
  });

  it('.env.example names exactly the variables config.ts reads, and its values load', function () {
    const text = read('.env.example');
    const named = [...text.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    expect(named.length, 'a variable named twice').to.equal(new Set(named).size);
    expect(
      vars.filter((v) => v !== 'DYNO' && !named.includes(v)),
      'missing from .env.example',
    ).to.deep.equal([]);
    expect(
      named.filter((v) => !vars.includes(v)),
      'not read by config.ts',
    ).to.deep.equal([]);
    const config = loadConfig(parseComposeEnvFile(text));
    expect(config.port).to.equal(3000);
    // the commented-out values are the defaults: uncommenting them changes nothing
    const all = parseComposeEnvFile(text.replace(/^# ([A-Z][A-Z0-9_]+=)/gm, '$1'));
    // examples, not defaults
    delete all.INSTANCE_NAME;
    delete all.REDIS_TLS_URL;
    delete all.OIDC_CLIENTS;
    const { instanceName: _a, ...withDefaults } = loadConfig(all);
    const { instanceName: _b, ...plain } = config;
    expect(withDefaults).to.deep.equal(plain);
  });

  it('the configuration table (docs/configuration.md) names every variable', function () {
    const table = read('docs/configuration.md');
    expect(vars.filter((v) => !table.includes(v))).to.deep.equal([]);
  });

  it('app.json: sizes that allow 2 web dynos and preboot, and only variables config.ts reads', function () {
    const app = JSON.parse(read('app.json')) as { formation: Record<string, { quantity: number; size: string }>; env: Record<string, unknown> };
    for (const [type, f] of Object.entries(app.formation)) {
      // Eco and Basic allow one dyno per process type and no preboot
      if (f.quantity > 1) expect(f.size.toLowerCase(), type).to.not.match(/^(eco|basic|free|hobby)$/);
      expect(f.size.toLowerCase(), type).to.match(
        /^(eco|basic|standard-1x|standard-2x|performance-m|performance-l|performance-l-ram|performance-xl|performance-2xl|private-[sml]|shield-[sml])$/,
      );
    }
    expect(app.formation.web!.quantity).to.be.at.least(2);
    expect(Object.keys(app.env).filter((v) => !vars.includes(v))).to.deep.equal([]);
    expect(read('docs/operations.md')).to.match(/standard-1x/i);
  });

  it('app.json as deployed (generated secrets, its values) loads, and never asks a chat question nobody receives', function () {
    const app = JSON.parse(read('app.json')) as { env: Record<string, { value?: string; generator?: string }> };
    const env: Record<string, string> = { REDIS_URL: 'redis://127.0.0.1:6379' };
    for (const [name, v] of Object.entries(app.env)) {
      if (v.value !== undefined) env[name] = v.value;
      else if (v.generator === 'secret') env[name] = 's'.repeat(64); // Heroku's generator: 64 hex characters
    }
    const config = loadConfig(env);
    expect(config.production).to.equal(true);
    expect(config.loginConfirmation && config.messagingProvider === 'log', 'confirmation on with the log provider: the question is never delivered').to.equal(
      false,
    );
    expect(app.env.JWT_SECRET!.generator).to.equal('secret');
  });

  it("compose checks the environment once before any node starts (service 'config', the same variables)", function () {
    const services = compose() as Record<string, ComposeService & { command?: string[]; depends_on?: Record<string, { condition: string }>; image?: string }>;
    expect(services.config!.command).to.deep.equal(['node', 'dist/src/bin/check.js', 'config']);
    const { INSTANCE_NAME: _name, ...workerEnv } = services.worker1!.environment!;
    expect(services.config!.environment).to.deep.equal(workerEnv);
    for (const name of ['web1', 'web2', 'worker1', 'worker2']) {
      expect(services[name]!.depends_on?.config?.condition, name).to.equal('service_completed_successfully');
      expect(services[name]!.image, `${name} runs the one image`).to.equal(services.config!.image);
    }
    for (const name of ['web1', 'web2']) expect(services.lb!.depends_on?.[name]?.condition).to.equal('service_healthy');
  });

  it('Dockerfile on a Node LTS that engines allows (22 or 24), engines covering the Node running this test', function () {
    const froms = [...read('Dockerfile').matchAll(/^FROM node:(\d+)/gm)].map((m) => Number(m[1]));
    expect(froms.length).to.be.greaterThan(0);
    for (const major of froms) expect([22, 24]).to.include(major);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const majors = engines.split('||').map((r) => Number(/\^?(\d+)/.exec(r.trim())![1]));
    expect(majors).to.include(Number(process.versions.node.split('.')[0]));
    for (const major of froms) expect(majors).to.include(major);
  });
});
