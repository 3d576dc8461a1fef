import type { RedisClient } from './connection.js';

/**
 * Phase plans: a phase's fixed arguments compiled into its script, so a call carries only what
 * differs between requests. A check-login phase is three steps whose 38 arguments were almost
 * all the same on every request (each budget's points, window and mode, the steps' key and
 * argument counts, the collect window) and whose six keys held two twice; a plan sends its four
 * unique keys. Measured, that did not move the web node's CPU per check beyond noise; what it
 * buys is a smaller call and a runner that reads a literal step table instead of parsing a
 * header (Redis time of a check script about 11 % less, docs/benchmark.md). A plan keeps the
 * phase's source and its step protocol as they are and puts a prologue before the runner that
 * writes the steps to run (names, keys, arguments) from the unique keys and the varying
 * arguments the call sends, every fixed argument a Lua literal.
 *
 * What is fixed is said by the caller (`fixed()`): configuration and shape, never request data.
 * A plan is made once per distinct shape (steps, key repeats, fixed values), so a process has a
 * handful. A call with no fixed argument (a phase whose caller did not opt in, e.g. one whose
 * step count varies with the data) and any call past MAX_PLANS (a caller marking request data
 * as fixed) run uncompiled, as before.
 */
export type ScriptArg = string | number;

/** An argument that is the same on every request of its shape (configuration, a mode, a count). */
export class Fixed {
  /** its part of a plan's shape, quoted so that no value reads as another shape's separators */
  readonly shape: string;
  constructor(readonly value: ScriptArg) {
    this.shape = `${JSON.stringify(value)},`;
  }
}

/** Fixed arguments by value: the same few (points, windows, modes) recur on every request. */
const FIXED = new Map<ScriptArg, Fixed>();

export function fixed(value: ScriptArg): Fixed {
  let f = FIXED.get(value);
  if (f === undefined) {
    f = new Fixed(value);
    // bounded: fixed values are configuration; anything past this is made anew each time
    if (FIXED.size < 1024) FIXED.set(value, f);
  }
  return f;
}

/** A step's argument: sent with each call, or compiled into the plan's script. */
export type StepArg = ScriptArg | Fixed;

export const argValue = (a: StepArg): ScriptArg => (a instanceof Fixed ? a.value : a);

/** The plan-independent part of a step (scripts.ts's Step). */
export interface PlanStep {
  step: string;
  keys: string[];
  args: StepArg[];
}

/** Plans a process may compile before it stops compiling (each one is a script in Redis's cache). */
export const MAX_PLANS = 64;

/** A Lua string literal of any text (decimal byte escapes: Lua 5.1 has no \x or \u). */
export function luaString(value: ScriptArg): string {
  let out = '"';
  for (const byte of Buffer.from(String(value), 'utf8')) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${byte}`;
  }
  return out + '"';
}

/** What one call of a plan sends: its command, the unique keys, the varying arguments. */
export interface PlanCall {
  command: string;
  keys: string[];
  args: ScriptArg[];
}

export class PhasePlans {
  /** shape → the command that runs its compiled script */
  private readonly commands = new Map<string, string>();

  /**
   * @param source the phase's source with the prologue put before its runner
   */
  constructor(
    private readonly client: RedisClient,
    private readonly source: (phase: string, prologue: string) => string,
  ) {}

  /** How many plans this process compiled (tests: request data never becomes a plan). */
  get size(): number {
    return this.commands.size;
  }

  /** The call of `steps` as a plan of `phase`, compiling it on first sight; null: run it uncompiled. */
  plan(phase: string, steps: readonly PlanStep[]): PlanCall | null {
    const keys: string[] = [];
    /** per step, the place of each of its keys among the unique ones (the prologue's K[...]) */
    const keyAt: number[][] = [];
    const args: ScriptArg[] = [];
    let anyFixed = false;
    // The shape: which step, which of the unique keys, which fixed values and where the varying ones go.
    let shape = phase;
    for (const s of steps) {
      shape += `|${s.step}:`;
      const at = s.keys.map((k) => {
        const i = keys.indexOf(k);
        return i < 0 ? keys.push(k) - 1 : i;
      });
      keyAt.push(at);
      shape += `${at.join(',')},`;
      shape += ':';
      for (const a of s.args) {
        if (a instanceof Fixed) {
          anyFixed = true;
          shape += a.shape;
        } else {
          args.push(a);
          shape += '?,';
        }
      }
    }
    if (!anyFixed) return null;
    let command = this.commands.get(shape);
    if (command === undefined) {
      if (this.commands.size >= MAX_PLANS) return null;
      command = `pinauth_plan_${this.commands.size}`;
      this.client.defineCommand(command, { lua: this.source(phase, prologue(steps, keyAt)) });
      this.commands.set(shape, command);
    }
    return { command, keys, args };
  }
}

/**
 * Lua that turns a plan's call (unique keys, varying arguments) into the PLAN the runner of
 * lib/steps.lua runs: each step's name, keys and arguments, fixed ones as literals. Redis passes
 * every argument as a string, so literals are strings too.
 */
function prologue(steps: readonly PlanStep[], keyAt: readonly number[][]): string {
  let varying = 0;
  const entries = steps.map((s, i) => {
    const keys = keyAt[i]!.map((at) => `K[${at + 1}]`);
    const args = s.args.map((a) => (a instanceof Fixed ? luaString(a.value) : `V[${++varying}]`));
    return `{ ${luaString(s.step)}, { ${keys.join(', ')} }, { ${args.join(', ')} } }`;
  });
  return `local K, V = KEYS, ARGV\nlocal PLAN = {\n  ${entries.join(',\n  ')},\n}\n`;
}
