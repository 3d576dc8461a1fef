import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the time goes in a `--cpu-prof` profile (`npm run bench -- --profile` writes one per
 * service process): self time by package and by function, biggest first.
 * Usage: node dist/scripts/bench/profile-summary.js <file.cpuprofile | directory> [top]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** node_modules/<pkg> (scoped too), node:<module>, the project's own folder, or (program) and such. */
function area(url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return url.split('/')[0]!;
  const own = /\/dist\/(src\/[^/]+|scripts)\//.exec(url);
  return own ? own[1]! : url;
}

function summarise(file: string, top: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byArea = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const a = area(url, functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
  }
  const busyUs = totalUs - (byArea.get('(idle)') ?? 0);
  const lines = (m: Map<string, number>): string[] =>
    [...m.entries()]
      .filter(([k]) => k !== '(idle)')
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([k, us]) => `  ${((100 * us) / busyUs).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  return [
    `${path.basename(file)}: ${(totalUs / 1e6).toFixed(1)} s profiled, ${(busyUs / 1e6).toFixed(1)} s busy`,
    ' by area (self time, % of busy):',
    ...lines(byArea),
    ' by function:',
    ...lines(byFn),
  ].join('\n');
}

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: profile-summary <file.cpuprofile | directory> [top]\n');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(target, f))
  : [target];
for (const f of files) process.stdout.write(summarise(f, top) + '\n\n');
