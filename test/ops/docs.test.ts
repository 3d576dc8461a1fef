import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from '../helpers/processes.js';

/** The repository's tracked files (what a clone has). */
const tracked = (): string[] => execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

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
});
