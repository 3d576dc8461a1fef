import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Debian packages the tests run (Chromium, redis-sentinel), installed with apt-get when the files
 * they provide are missing: CI machines start without them. Returns why it can't when it can't,
 * undefined when every file is there.
 */
export function ensureDebianPackages(files: string[], packages: string[]): string | undefined {
  if (files.every((f) => existsSync(f))) return undefined;
  if (process.getuid?.() !== 0) return `${files.join(', ')} missing and installing needs root: apt-get install ${packages.join(' ')}`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { env, stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '-qq', ...packages], { env, stdio: 'ignore', timeout: 600_000 });
  } catch (err) {
    return `apt-get install ${packages.join(' ')} failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  const missing = files.filter((f) => !existsSync(f));
  return missing.length === 0 ? undefined : `apt-get did not install ${missing.join(', ')}`;
}
