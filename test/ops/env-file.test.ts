import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { parseComposeEnvFile } from '../helpers/env-file.js';
import { ROOT } from '../helpers/processes.js';

const EXAMPLE = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
/** The example with every commented-out `# NAME=value` line switched on, as a person edits it. */
const UNCOMMENTED = EXAMPLE.replace(/^# ([A-Z][A-Z0-9_]+=)/gm, '$1');

/** What `set -a; . ./.env; set +a` exports, in a bash that starts with nothing else set. */
function bashLoads(text: string): { status: number | null; stderr: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'env-file-'));
  try {
    writeFileSync(path.join(dir, '.env'), text);
    const r = spawnSync(
      'bash',
      ['--norc', '--noprofile', '-c', 'set -eu; set -a; . ./.env; set +a; exec node -e "process.stdout.write(JSON.stringify(process.env))"'],
      {
        cwd: dir,
        env: { PATH: process.env.PATH! },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
      },
    );
    return { status: r.status, stderr: r.stderr, env: r.status === 0 ? (JSON.parse(r.stdout) as Record<string, string>) : {} };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('ops: .env.example loads alike in bash (set -a; . ./.env) and in Compose (env_file)', function () {
  this.timeout(20000);

  for (const [name, text] of [
    ['as shipped', EXAMPLE],
    ['with every commented-out value switched on', UNCOMMENTED],
  ] as const) {
    it(`${name}: bash and a Compose-rules parser read the same values, and the service loads them`, function () {
      const compose = parseComposeEnvFile(text);
      const bash = bashLoads(text);
      expect(bash.stderr, 'bash complained').to.equal('');
      expect(bash.status).to.equal(0);
      expect(Object.keys(compose).length).to.be.greaterThan(20);
      for (const [k, v] of Object.entries(compose)) expect(bash.env[k], k).to.equal(v);
      loadConfig(compose);
    });
  }

  it('texts keep their apostrophes and placeholders, JSON its quotes', function () {
    const env = bashLoads(UNCOMMENTED).env;
    expect(env.REPLY_SIGNED_IN).to.equal("You're signed in to {app}.");
    expect(env.REPLY_CONFIRM).to.match(/if this wasn't you\.$/);
    const clients = JSON.parse(env.OIDC_CLIENTS!) as { client_id: string; redirect_uris: string[] }[];
    expect(clients[0]!.client_id).to.equal('my-app');
    expect(clients[0]!.redirect_uris).to.deep.equal(['https://app.example.com/callback']);
    const config = loadConfig(parseComposeEnvFile(UNCOMMENTED));
    expect(config.replies.texts.signedIn).to.equal("You're signed in to {app}.");
  });

  it('the checks can fail: an unquoted text breaks bash, and Compose keeps quotes bash drops', function () {
    expect(bashLoads("REPLY_SIGNED_IN=You're signed in\n").status).to.not.equal(0);
    expect(bashLoads('REPLY_DENIED=OK, nobody was signed in.\n').status).to.not.equal(0);
    // unquoted JSON: bash strips its quotes, Compose keeps them
    const json = 'OIDC_CLIENTS=[{"client_id":"a"}]\n';
    expect(bashLoads(json).env.OIDC_CLIENTS).to.not.equal(parseComposeEnvFile(json).OIDC_CLIENTS);
  });

  it("the parser follows Compose's rules: quotes, escapes, comments, export, no interpolation", function () {
    expect(
      parseComposeEnvFile(
        ['# a comment', '', 'A=\'x "y" $z # not a comment\'', 'B="a\\"b\\\\c\\nd" # comment', 'C= plain value # comment', 'export D=1', 'E='].join('\n'),
      ),
    ).to.deep.equal({ A: 'x "y" $z # not a comment', B: 'a"b\\c\nd', C: 'plain value', D: '1', E: '' });
    expect(() => parseComposeEnvFile('A=$HOME')).to.throw(/interpolated/);
    expect(() => parseComposeEnvFile('A="unterminated')).to.throw(/unterminated/);
  });
});
