import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * The Lua scripts (src/redis/scripts/*.lua, copied beside the build) registered on a client.
 * ioredis sends EVALSHA and falls back to EVAL once per connection.
 */
const SCRIPT_NAMES = [
  'register',
  'check',
  'cancel',
  'claim-login',
  'complete-login',
  'expire-due',
  'rotate-session',
  'intake-push',
  'intake-lock',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

type ScriptArg = string | number;
type ScriptFn = (...args: ScriptArg[]) => Promise<unknown>;

const sources = new Map<ScriptName, string>(
  SCRIPT_NAMES.map((name) => [name, readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), 'utf8')]),
);

const commandName = (name: ScriptName): string => 'pinauth_' + name.replace(/-/g, '_');

export class Scripts {
  constructor(private readonly client: Redis) {
    for (const [name, lua] of sources) {
      client.defineCommand(commandName(name), { numberOfKeys: 0, lua });
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
