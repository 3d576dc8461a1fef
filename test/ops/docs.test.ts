import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../helpers/processes.js';

/** The repository's tracked files (what a clone has). */
const tracked = (): string[] => execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

/** The reference docs whose back-ticked paths and script names are checked. */
const referenceDocs = (): string[] => tracked().filter((f) => f === 'README.md' || f === 'SECURITY.md' || /^docs\/[^/]+\.md$/.test(f));

/** Repository folders a back-ticked path starts with. */
const ROOTS = /^(src|test|scripts|docs|bench|packages)\//;
/** Extensions of the files a doc names: a back-ticked `name.ext` must be one of the repository's files. */
const FILE = /^[\w.-]*[\w-]\.(ts|js|mjs|lua|md|json|sh|ya?ml|css|svg|png|ico|rdb|example)$/;

/** Inline code spans of a Markdown text (fenced blocks left out: they hold commands and output). */
function codeSpans(text: string): Array<{ line: number; code: string }> {
  const spans: Array<{ line: number; code: string }> = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) for (const [, code] of line.matchAll(/`([^`\n]+)`/g)) spans.push({ line: i + 1, code: code! });
  });
  return spans;
}

const globRegex = (glob: string): RegExp =>
  new RegExp(`^${glob.replace(/\*\*\/?|\*|[.+?^${}()|[\]\\]/g, (m) => (m.startsWith('**') ? '(?:.*/)?' : m === '*' ? '[^/]*' : `\\${m}`))}`);

/**
 * Whether a back-ticked path names something the repository has: a tracked file, a folder of
 * them, or (with `*`) at least one file matching it. A `.js` path may name its TypeScript source
 * (`src/bin/web.js` for `src/bin/web.ts`).
 */
function exists(files: string[], ref: string): boolean {
  const candidates = ref.endsWith('.js') ? [ref, ref.replace(/\.js$/, '.ts')] : [ref];
  return candidates.some((c) => {
    if (c.includes('*')) return files.some((f) => globRegex(c).test(f));
    const bare = c.replace(/\/$/, '');
    if (files.some((f) => f === bare || f.startsWith(`${bare}/`))) return true;
    return !bare.includes('/') && files.some((f) => path.basename(f) === bare);
  });
}

/** Back-ticked paths and file names in a doc that no tracked file answers. */
function stalePaths(files: string[], doc: string, text: string): string[] {
  const stale: string[] = [];
  for (const { line, code } of codeSpans(text)) {
    // `src/auth/login.ts:159`, `keys.ts` (a section): the path part
    const ref = code
      .trim()
      .replace(/:\d+(-\d+)?$/, '')
      .replace(/[),.;]+$/, '');
    if (/\s/.test(ref) || /(^|\/)dist\//.test(ref) || ref.includes('node_modules')) continue;
    if (!ROOTS.test(ref) && !FILE.test(ref)) continue;
    if (!exists(files, ref)) stale.push(`${doc}:${line} \`${code}\``);
  }
  return stale;
}

/**
 * `npm run X` (and `npm start` / `npm test`) in a doc whose script package.json does not
 * define; `-w <workspace>` runs the workspace's script.
 */
function staleNpmScripts(doc: string, text: string, scripts: (workspace?: string) => Record<string, string>): string[] {
  const stale: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\bnpm (?:run(?:-script)? ([\w:.-]+)|(start|test)\b)([^`\n|]*)/g)) {
      const name = m[1] ?? m[2]!;
      const workspace = /(?:-w|--workspace)[ =](\S+)/.exec(m[3] ?? '')?.[1];
      if (!(name in scripts(workspace))) stale.push(`${doc}:${i + 1} npm ${m[1] ? 'run ' : ''}${name}${workspace ? ` -w ${workspace}` : ''}`);
    }
  });
  return stale;
}

/** A Lua script named as one (`name.lua`, "the `name` script", "script `name`") must be a file under src/redis/scripts. */
function staleLuaScripts(files: string[], doc: string, text: string): string[] {
  const lua = new Set(files.filter((f) => f.startsWith('src/redis/scripts/') && f.endsWith('.lua')).map((f) => path.basename(f, '.lua')));
  const stale: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/`([a-z][\w-]*)` (?:Lua )?script\b|\b(?:Lua )?script `([a-z][\w-]*)`/g)) {
      const name = m[1] ?? m[2]!;
      if (!lua.has(name)) stale.push(`${doc}:${i + 1} script \`${name}\``);
    }
  });
  return stale;
}

describe('ops: the docs are self-contained', function () {
  it('no file cites DESIGN.md or a spec file that is not in the repository', function () {
    const files = tracked().filter((f) => /\.(md|ts|json|ya?ml|sh|lua)$/.test(f) && f !== 'test/ops/docs.test.ts');
    const offenders = files.filter((f) => /DESIGN\.md|spec\/interface|interface\.md/i.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offenders).to.deep.equal([]);
  });

  it('every relative link in the Markdown files points at a file of the repository', function () {
    const broken: string[] = [];
    for (const file of tracked().filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:|#)/.test(target!)) continue;
        const resolved = path.join(ROOT, path.dirname(file), target!.split('#')[0]!);
        if (!existsSync(resolved)) broken.push(`${file} → ${target}`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('every back-ticked path and file name in README, SECURITY and docs/ is a file of the repository', function () {
    const files = tracked().filter((f) => existsSync(path.join(ROOT, f)));
    const stale = referenceDocs().flatMap((doc) => stalePaths(files, doc, readFileSync(path.join(ROOT, doc), 'utf8')));
    expect(stale).to.deep.equal([]);
  });

  it('every `npm run` script and Lua script those docs name exists', function () {
    const files = tracked().filter((f) => existsSync(path.join(ROOT, f)));
    const manifests: Record<string, string> = {
      '': 'package.json',
      '@pin-auth/client': 'packages/client/package.json',
      'packages/client': 'packages/client/package.json',
    };
    const scripts = (workspace = ''): Record<string, string> => {
      const manifest = manifests[workspace];
      if (manifest === undefined) return {};
      return (JSON.parse(readFileSync(path.join(ROOT, manifest), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    };
    const stale = referenceDocs().flatMap((doc) => {
      const text = readFileSync(path.join(ROOT, doc), 'utf8');
      return [...staleNpmScripts(doc, text, scripts), ...staleLuaScripts(files, doc, text)];
    });
    expect(stale).to.deep.equal([]);
  });
});

describe('ops: the doc checks catch what they are for', function () {
  const files = ['src/auth/tokens.ts', 'src/redis/scripts/complete-login.lua', 'test/realtime/cross-node.test.ts', 'package.json'];
  it('flags a path or file name that is gone, passes one that is there', function () {
    const text =
      'See `src/auth/tokens.ts:12`, `test/realtime/*.test.ts`, `tokens.ts` and `src/bin/web.js`.\nAlso `src/redis/write-coalescing.ts`, `phase-plans.ts`, `test/gone/*`.\n```\n`src/in/a/fence.ts`\n```';
    expect(stalePaths(files, 'x.md', text)).to.deep.equal([
      'x.md:1 `src/bin/web.js`',
      'x.md:2 `src/redis/write-coalescing.ts`',
      'x.md:2 `phase-plans.ts`',
      'x.md:2 `test/gone/*`',
    ]);
  });
  it('flags an npm script or a Lua script that is not defined', function () {
    const scripts = (w?: string): Record<string, string> => (w === undefined ? { build: '', start: '' } : { build: '' });
    expect(staleNpmScripts('x.md', '`npm run build`, `npm start`, `npm test`, `npm run nope`, `npm run build -w @pin-auth/client`', scripts)).to.deep.equal([
      'x.md:1 npm test',
      'x.md:1 npm run nope',
    ]);
    expect(staleLuaScripts(files, 'x.md', 'the `complete-login` script, the `intake-pump` script, script `claim`')).to.deep.equal([
      'x.md:1 script `intake-pump`',
      'x.md:1 script `claim`',
    ]);
  });
});
