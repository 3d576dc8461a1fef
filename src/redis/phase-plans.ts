import type { RedisClient } from './connection.js';

/**
 * Phase plans: a phase's fixed arguments compiled into its script, so a call carries only what
 * differs between requests. A check-login phase is three steps whose 38 arguments were almost
 * all the same on every request (each budget's points, window and mode, the steps' key and
 * argument counts, the collect window) and whose six keys held two twice; a plan sends its four
 * unique keys. A smaller call is less for ioredis to write (web CPU ratio to bare Koa without
 * plans: register-pin ≈ 3.7 instead of 3.0, check-login ≈ 2.75 instead of 2.35) and a runner that
 * reads a literal step table instead of parsing a header (Redis time of a check script about
 * 11 % less, docs/benchmark.md). A plan keeps the
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
  keys: readonly string[];
  args: readonly StepArg[];
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

/**
 * A shape is read as a path of tokens through a trie: the phase, then per step STEP, its name,
 * the place of each of its keys among the unique ones, ARGS and per argument a fixed value's
 * shape or VARYING. Walking it allocates nothing (a shape spelled as a string cost every
 * polled request ≈ 2 KB of garbage), and a fixed value made anew (past the FIXED map) still
 * finds its plan by its shape's text.
 */
type ShapeToken = string | number | symbol;
const STEP = Symbol('step');
const ARGS = Symbol('args');
const VARYING = Symbol('varying');

interface ShapeNode {
  next: Map<ShapeToken, ShapeNode>;
  /** the command of the shape that ends here */
  command?: string;
}

/** The node under `token`, made when `grow`; undefined once off the known shapes. */
function descend(node: ShapeNode | undefined, token: ShapeToken, grow: boolean): ShapeNode | undefined {
  if (node === undefined) return undefined;
  let child = node.next.get(token);
  if (child === undefined && grow) {
    child = { next: new Map() };
    node.next.set(token, child);
  }
  return child;
}

function hasFixed(steps: readonly PlanStep[]): boolean {
  for (const s of steps) for (const a of s.args) if (a instanceof Fixed) return true;
  return false;
}

export class PhasePlans {
  private readonly shapes: ShapeNode = { next: new Map() };
  private compiled = 0;

  /**
   * @param source the phase's source with the prologue put before its runner
   */
  constructor(
    private readonly client: RedisClient,
    private readonly source: (phase: string, prologue: string) => string,
  ) {}

  /** How many plans this process compiled (tests: request data never becomes a plan). */
  get size(): number {
    return this.compiled;
  }

  /** The call of `steps` as a plan of `phase`, compiling it on first sight; null: run it uncompiled. */
  plan(phase: string, steps: readonly PlanStep[]): PlanCall | null {
    if (!hasFixed(steps)) return null;
    // past MAX_PLANS the trie no longer grows: a new shape falls off it and runs uncompiled
    const grow = this.compiled < MAX_PLANS;
    const keys: string[] = [];
    const args: ScriptArg[] = [];
    let node = descend(this.shapes, phase, grow);
    for (const s of steps) {
      node = descend(descend(node, STEP, grow), s.step, grow);
      for (const k of s.keys) {
        const at = keys.indexOf(k);
        node = descend(node, at < 0 ? keys.push(k) - 1 : at, grow);
      }
      node = descend(node, ARGS, grow);
      for (const a of s.args) {
        if (a instanceof Fixed) {
          node = descend(node, a.shape, grow);
        } else {
          args.push(a);
          node = descend(node, VARYING, grow);
        }
      }
    }
    if (node === undefined) return null;
    if (node.command === undefined) {
      if (!grow) return null;
      node.command = `pinauth_plan_${this.compiled++}`;
      this.client.defineCommand(node.command, { lua: this.source(phase, prologue(steps, keyPlaces(steps))) });
    }
    return { command: node.command, keys, args };
  }
}

/** Per step, the place of each of its keys among the phase's unique keys (the prologue's K[...]). */
function keyPlaces(steps: readonly PlanStep[]): number[][] {
  const unique: string[] = [];
  return steps.map((s) =>
    s.keys.map((k) => {
      const i = unique.indexOf(k);
      return i < 0 ? unique.push(k) - 1 : i;
    }),
  );
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
