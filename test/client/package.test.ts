import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomPhone } from '../helpers/flow.js';
import { RELAXED_LIMITS, ROOT, startStack } from '../helpers/processes.js';
import { postChat } from '../ops/support.js';

const run = promisify(execFile);
const CLIENT_DIR = path.join(ROOT, 'packages/client');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** socket.io-client and what it pulls in: everything an install of the client may bring. */
const ALLOWED = new Set([
  '@pin-auth/client',
  'socket.io-client',
  'engine.io-client',
  'engine.io-parser',
  'socket.io-parser',
  '@socket.io/component-emitter',
  'debug',
  'ms',
  'ws',
  'xmlhttprequest-ssl',
  'supports-color',
  'has-flag',
  'bufferutil',
  'utf-8-validate',
]);

/** A strict TypeScript program a user of the package would write. */
const USER_PROGRAM = `import { PinAuthClient, PinAuthError, isTransient, type LoginAttempt, type LoginStatus, type Session } from '@pin-auth/client';

const auth = new PinAuthClient({ baseUrl: 'https://auth.example.com', whatsappNumber: '+15551234567' });
export async function signIn(show: (text: string, link: string | undefined) => void): Promise<Session | undefined> {
  const login: LoginAttempt = await auth.startLogin();
  show(login.text, login.waLink);
  const seen: LoginStatus[] = [];
  login.onStatus((s) => seen.push(s));
  try {
    const session = await login.session;
    const fresh: Session = await auth.refresh(session);
    return fresh;
  } catch (err) {
    if (err instanceof PinAuthError && isTransient(err.code)) return undefined;
    throw err;
  }
}
`;

/** The same program with a type error: proves the compiler really checks against the declarations. */
const WRONG_PROGRAM = `import { PinAuthClient } from '@pin-auth/client';
const auth = new PinAuthClient({ baseUrl: 'https://auth.example.com' });
export const n: Promise<number> = auth.startLogin().then((l) => l.emojiString);
`;

/**
 * The client as its users get it: packed with npm, installed from the tarball into a fresh app
 * (dependencies from the local npm cache, else the registry), imported in Node and compiled
 * against with `tsc --strict` (no @types/node: the declarations must stand on their own).
 */
describe('client package: @pin-auth/client packed, installed into a fresh app, imported and type-checked', function () {
  this.timeout(180000);
  let app: string;
  let packDir: string;
  let tarball: string;

  before(async function () {
    packDir = await mkdtemp(path.join(os.tmpdir(), 'pin-auth-pack-'));
    app = await mkdtemp(path.join(os.tmpdir(), 'pin-auth-app-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: CLIENT_DIR });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = path.join(packDir, packed!.filename);
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app });
  });
  after(async function () {
    await rm(app, { recursive: true, force: true });
    await rm(packDir, { recursive: true, force: true });
  });

  it('ships ESM, type declarations, the browser bundle, a README and the LICENSE, and no server code', async function () {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n');
    for (const f of [
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/login.d.ts',
      'package/dist/pin-auth-client.js',
      'package/package.json',
      'package/README.md',
      'package/LICENSE',
    ]) {
      expect(files).to.include(f);
    }
    expect(files.filter((f) => !/^package\/(dist|src)\/|^package\/(package\.json|README\.md|LICENSE)$/.test(f))).to.deep.equal([]);
    // no build state
    expect(files.filter((f) => /tsbuildinfo/.test(f))).to.deep.equal([]);
    // the licence is the repository's
    expect(await readFile(path.join(app, 'node_modules/@pin-auth/client/LICENSE'), 'utf8')).to.equal(await readFile(path.join(ROOT, 'LICENSE'), 'utf8'));
    const manifest = JSON.parse(await readFile(path.join(app, 'node_modules/@pin-auth/client/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).to.deep.equal(['socket.io-client']);
  });

  it('installing it pulls in only socket.io-client and its own dependencies', async function () {
    const lock = JSON.parse(await readFile(path.join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const installed = Object.keys(lock.packages)
      .filter((p) => p.startsWith('node_modules/'))
      .map((p) => p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(installed).to.include.members(['@pin-auth/client', 'socket.io-client']);
    expect(installed.filter((p) => !ALLOWED.has(p))).to.deep.equal([]);
  });

  it('imports in Node: the client, its errors and helpers', async function () {
    const script = `import { PinAuthClient, PinAuthError, randomPin, chatText } from '@pin-auth/client';
const c = new PinAuthClient({ baseUrl: 'http://127.0.0.1:9' });
console.log(JSON.stringify({ client: typeof c.startLogin, error: new PinAuthError('CANCELLED', 'x').code, pin: randomPin().length, text: chatText('🍎') }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app });
    expect(JSON.parse(stdout)).to.deep.equal({ client: 'function', error: 'CANCELLED', pin: 24, text: 'PIN: 🍎' });
  });

  it('signs a person in from Node, installed from the tarball, against a service with every production default', async function () {
    const secret = 'package-test-webhook-secret-0123456789abcdef';
    const defaults = Object.fromEntries(Object.keys(RELAXED_LIMITS).map((k) => [k, '']));
    const stack = await startStack({
      inProcess: true,
      name: 'client-package',
      env: { ...defaults, NODE_ENV: 'production', JWT_SECRET: 'package-test-jwt-secret-0123456789abcdefgh', WEBHOOK_SECRET: secret },
    });
    try {
      // the app prints the text to send, then the session's phone
      const script = `import { PinAuthClient } from '@pin-auth/client';
const login = await new PinAuthClient({ baseUrl: process.argv[1] }).startLogin();
console.log(login.text);
const session = await login.session;
console.log(session.user.phone);
process.exit(0);`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, stack.url], { cwd: app, stdio: ['ignore', 'pipe', 'inherit'] });
      const phone = randomPhone();
      let out = '';
      let sent = false;
      const lines = new Promise<string[]>((resolve, reject) => {
        child.stdout.on('data', (b: Buffer) => {
          out += b.toString('utf8');
          const done = out.split('\n').filter(Boolean);
          if (done.length === 1 && !sent) {
            sent = true;
            void postChat(stack.url, done[0]!, { phone, secret }).catch(reject);
          }
        });
        child.on('exit', () => resolve(out.split('\n').filter(Boolean)));
      });
      const [text, signedIn] = await lines;
      // the service drew the string (production), eight emoji; the client sent none
      expect([...new Intl.Segmenter().segment(text!.replace(/^PIN: /, ''))]).to.have.length(8);
      expect(signedIn).to.equal(phone);
    } finally {
      await stack.stop();
    }
  });

  it('compiles a strict TypeScript program against its declarations, and refuses a wrong one', async function () {
    await writeFile(path.join(app, 'sign-in.ts'), USER_PROGRAM);
    await writeFile(path.join(app, 'wrong.ts'), WRONG_PROGRAM);
    const tsc = (file: string) =>
      run(process.execPath, [TSC, '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', file], { cwd: app });
    await tsc('sign-in.ts');
    const wrong = await tsc('wrong.ts').then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
    expect(wrong).to.match(/wrong\.ts.*error TS2322/);
  });
});
