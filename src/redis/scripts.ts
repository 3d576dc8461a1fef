import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';

/**
 * The Lua scripts (src/redis/scripts/*.lua, copied beside the build) registered on a client.
 * ioredis sends EVALSHA and falls back to EVAL once per connection. Scripts that check and spend
 * rate-limit budgets get the one budget library (scripts/lib/budgets.lua) prepended, and
 * claim-login the login's steps (scripts/lib/login-steps.lua): Redis scripts can't include each
 * other, and the limiter and the steps must be written once.
 */
const SCRIPT_NAMES = [
  'register',
  'check',
  'cancel',
  'claim-login',
  'complete-login',
  'expire-due',
  'rotate-session',
  'fail-login',
  'end-sessions',
  'list-sessions',
  'intake-push',
  'intake-lock',
  'delivery',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * Scripts that take their keys as KEYS (the first `n` arguments), as Redis Cluster needs to route
 * them: ported to the cluster key schema (docs/scaling.md). The others still build their keys
 * from the prefix inside Lua, which only a single primary allows.
 */
const DECLARED_KEYS: Partial<Record<ScriptName, number | 'first-argument'>> = {
  'intake-push': 1,
  'intake-lock': 1,
  'complete-login': 1,
  // its steps' keys (none when it runs the whole chain on one server): the caller passes the count first
  'claim-login': 'first-argument',
};

/** The scripts whose ARGV starts with budgets (lib/budgets.lua). */
const WITH_BUDGETS: ReadonlySet<ScriptName> = new Set<ScriptName>(['register', 'check', 'cancel']);

export type ScriptArg = string | number;
type ScriptFn = (...args: ScriptArg[]) => Promise<unknown>;

const read = (file: string): string => readFileSync(new URL(`./scripts/${file}.lua`, import.meta.url), 'utf8');
const budgetLibrary = read('lib/budgets');
const loginSteps = read('lib/login-steps');
/** keys.ts's schema in Lua, for the scripts that still build their keys from the prefix */
export const keyLibrary = read('lib/keys');

/** The source Redis runs for a script (libraries included where they are used; fault tests
 * recognise its EVAL / EVALSHA on the wire). */
export function scriptSource(name: ScriptName): string {
  // the login's steps, and the key schema for when it runs them all in one call (one server)
  if (name === 'claim-login') return keyLibrary + loginSteps + read(name);
  const keyed = DECLARED_KEYS[name] === undefined ? keyLibrary : '';
  return keyed + (WITH_BUDGETS.has(name) ? budgetLibrary : '') + read(name);
}

/** The first line of a script's own file: tells its EVAL apart (the libraries before it are shared). */
export function scriptMarker(name: ScriptName): string {
  return read(name).split('\n')[0]!;
}

const sources = new Map<ScriptName, string>(SCRIPT_NAMES.map((name) => [name, scriptSource(name)]));

const commandName = (name: ScriptName): string => 'pinauth_' + name.replace(/-/g, '_');

export class Scripts {
  constructor(private readonly client: RedisClient) {
    for (const [name, lua] of sources) {
      const declared = DECLARED_KEYS[name] ?? 0;
      // without numberOfKeys, ioredis takes the key count from the call's first argument
      client.defineCommand(commandName(name), declared === 'first-argument' ? { lua } : { numberOfKeys: declared, lua });
    }
  }

  run(name: ScriptName, args: ScriptArg[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, ScriptFn>)[commandName(name)];
    if (!fn) throw new Error(`script ${name} not defined`);
    return fn.apply(this.client, args);
  }

  /** Runs a script that returns an array of strings (nil entries become ''). */
  async strings(name: ScriptName, args: ScriptArg[]): Promise<string[]> {
    const out = await this.run(name, args);
    if (!Array.isArray(out)) throw new Error(`script ${name} returned ${typeof out}`);
    return out.map((v) => (v === null || v === undefined ? '' : String(v)));
  }

  async number(name: ScriptName, args: ScriptArg[]): Promise<number> {
    return Number(await this.run(name, args));
  }

  async string(name: ScriptName, args: ScriptArg[]): Promise<string> {
    return String(await this.run(name, args));
  }
}
