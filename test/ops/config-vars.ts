import { loadConfig } from '../../src/config.js';

/**
 * The environment variables the config module reads, found by running it against an empty
 * environment that records every name asked for (so a variable added to config.ts shows up
 * here with no list to keep by hand).
 */
export function configVariables(): string[] {
  const seen = new Set<string>();
  const recorder = new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      if (typeof name === 'string') seen.add(name);
      return undefined;
    },
  });
  loadConfig(recorder);
  return [...seen].sort();
}

/** Docker Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `${VAR?error}`. */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (_m, name: string, colon: string, op: string | undefined, arg: string) => {
    const v = env[name];
    const unset = colon ? v === undefined || v === '' : v === undefined;
    if (!unset) return v!;
    if (op === '?') throw new Error(`compose would stop: ${name}: ${arg}`);
    return op === '-' ? arg : '';
  });
}
