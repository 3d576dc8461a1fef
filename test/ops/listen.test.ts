import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { expect } from 'chai';
import { procfileCommand, ROOT, startProcess, stopProcess, type ServiceProcess } from '../helpers/processes.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from '../helpers/redis.js';

const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: 'listen-test-jwt-secret-0123456789abcdef', WEBHOOK_SECRET: 'listen-test-webhook-secret-0123456789' };

/** An IPv4 address of this machine that is not loopback, if it has one. */
const outsideAddress = (): string | undefined =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;

/** Whether a TCP connection to host:port is accepted. */
const reachable = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });

/** HOST (loopback by default outside production, every interface in production) and a port in use. */
describe('ops: where the web server listens', function () {
  this.timeout(90000);
  const prefix = uniquePrefix('listen');
  const started: ServiceProcess[] = [];
  after(async function () {
    await Promise.all(started.map((p) => stopProcess(p)));
    await cleanPrefix(prefix);
  });

  it('development listens on 127.0.0.1 only; production on every interface', async function () {
    const [dev, prod] = await Promise.all([
      startProcess('web', { KEY_PREFIX: prefix, NODE_ENV: 'development' }),
      startProcess('web', { KEY_PREFIX: prefix, ...PRODUCTION }),
    ]);
    started.push(dev, prod);
    expect(dev.output()).to.match(/web listening.*"host":"127\.0\.0\.1"/);
    expect(await reachable('127.0.0.1', dev.port)).to.equal(true);
    expect(await reachable('127.0.0.1', prod.port)).to.equal(true);
    const outside = outsideAddress();
    if (outside === undefined) return this.skip(); // no other interface to try from
    expect(await reachable(outside, dev.port), `development reached at ${outside}`).to.equal(false);
    expect(await reachable(outside, prod.port), `production at ${outside}`).to.equal(true);
  });

  it('a port in use: one JSON error line naming the port, no stack trace, exit code 1', async function () {
    const holder = started[0] ?? (await startProcess('web', { KEY_PREFIX: prefix, NODE_ENV: 'development' }));
    const [cmd, ...args] = procfileCommand('web');
    const child = spawn(cmd!, args, {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        REDIS_URL,
        KEY_PREFIX: prefix,
        PORT: String(holder.port),
        HOST: '127.0.0.1',
        INSTANCE_NAME: 'listen-second',
        ...PRODUCTION,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, out).to.equal(1);
    const lines = out.split('\n').filter((l) => l.trim() !== '');
    const entries = lines.map((l) => JSON.parse(l) as { level?: string } & Record<string, unknown>);
    const errors = entries.filter((e) => e.level === 'error');
    expect(errors, out).to.have.length(1);
    expect(errors[0]).to.deep.include({
      message: `cannot listen on port ${holder.port}: the port is in use by another process`,
      port: holder.port,
      code: 'EADDRINUSE',
    });
    expect(errors[0]).to.not.have.property('stack');
    expect(out).to.not.match(/^\s+at /m);
  });
});
