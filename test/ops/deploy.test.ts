import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { redisOptions } from '../../src/redis/connection.js';
import { ROOT, procfileCommand } from '../helpers/processes.js';

const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

describe('ops: Heroku and Compose deployment files', function () {
  it('reads Heroku Redis (REDIS_TLS_URL first, self-signed TLS) and names the instance after DYNO', function () {
    const config = loadConfig({ REDIS_URL: 'redis://h:p@plain.example:6379', REDIS_TLS_URL: 'rediss://h:p@tls.example:6380', DYNO: 'web.2' });
    expect(config.redisUrl).to.equal('rediss://h:p@tls.example:6380');
    expect(config.instanceName).to.equal('web.2');
    expect(loadConfig({ REDIS_URL: 'rediss://h:p@only.example:6380' }).redisUrl).to.equal('rediss://h:p@only.example:6380');
    const single = config.redis as Extract<typeof config.redis, { kind: 'single' }>;
    expect(redisOptions(single, 'worker').tls).to.deep.equal({ rejectUnauthorized: false });
  });

  it('has Procfile roles, a build Heroku runs on deploy, engines, and an app.json with Redis and both dynos', function () {
    expect(procfileCommand('web')).to.deep.equal(['node', '--max-semi-space-size=8', 'dist/src/bin/web.js']);
    expect(procfileCommand('worker')).to.deep.equal(['node', 'dist/src/bin/worker.js']);
    const pkg = JSON.parse(read('package.json')) as { engines?: { node?: string }; scripts: Record<string, string> };
    expect(pkg.engines?.node).to.be.a('string');
    expect(pkg.scripts.build).to.equal('bash scripts/build.sh');
    expect(read('scripts/build.sh')).to.match(/^tsc -b$/m);
    const app = JSON.parse(read('app.json')) as { formation: Record<string, unknown>; addons: { plan: string }[]; env: Record<string, unknown> };
    expect(Object.keys(app.formation).sort()).to.deep.equal(['web', 'worker']);
    expect(app.addons.map((a) => a.plan.split(':')[0])).to.include('heroku-redis');
    expect(app.env).to.include.keys('JWT_SECRET', 'WEBHOOK_SECRET', 'ADMIN_PASSWORD', 'TRUST_PROXY');
  });

  it('has a compose file with Redis (AOF, noeviction), two webs behind a sticky nginx, two workers, and a Dockerfile', function () {
    const compose = read('docker-compose.yml');
    expect(compose)
      .to.match(/--appendonly", "yes"/)
      .and.to.match(/--maxmemory-policy", "noeviction"/);
    for (const service of ['web1', 'web2', 'worker1', 'worker2', 'lb']) expect(compose).to.match(new RegExp(`^  ${service}:$`, 'm'));
    const nginx = read('deploy/nginx.conf');
    expect(nginx)
      .to.match(/ip_hash;/)
      .and.to.match(/server web1:3000/)
      .and.to.match(/server web2:3000/);
    expect(read('Dockerfile'))
      .to.match(/npm run build/)
      .and.to.match(/CMD \["node", "--max-semi-space-size=8", "dist\/src\/bin\/web\.js"\]/);
  });
});
