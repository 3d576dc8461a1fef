import { readFileSync } from 'node:fs';
import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';
import { argValue, PhasePlans, type ScriptArg, type StepArg } from './phase-plans.js';

export { fixed, type ScriptArg, type StepArg } from './phase-plans.js';

/**
 * The Lua scripts (src/redis/scripts/**.lua, copied beside the build) registered on a client.
 * ioredis sends EVALSHA and falls back to EVAL once per connection.
 *
 * Every script takes its keys as KEYS, as Redis Cluster needs to route it, and each touches one
 * slot (keys.ts gives keys that change together one hash tag). Work that spans slots is split
 * into steps (scripts/steps/*.lua), each atomic on its slot and idempotent. A request runs its
 * steps as phases: on a cluster one call per step; on a single Redis the steps of a phase are
 * composed into one script (one round trip, atomic as a whole, as before the split), built
 * from the same step sources with the runner scripts/lib/steps.lua. The protocol between the
 * steps is described there. Steps that check and spend rate-limit budgets get the one budget
 * library (scripts/lib/budgets.lua) prepended: Redis scripts can't include each other.
 */
const SCRIPT_NAMES = ['claim-login', 'complete-login', 'rotate-session', 'end-sessions', 'list-sessions'] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/**
 * Number of KEYS of each whole script; 'first-argument': the caller passes the count first (the
 * steps and phases below do too).
 */
const DECLARED_KEYS: Record<ScriptName, number | 'first-argument'> = {
  // its steps' keys (none when it runs the whole chain on one server; lib/login-steps.lua)
  'claim-login': 'first-argument',
  'complete-login': 1,
  'rotate-session': 4,
  'end-sessions': 1,
  'list-sessions': 1,
};

const STEP_NAMES = [
  'budget-take',
  'budget-settle',
  'registration',
  'emoji',
  'active-add',
  'check',
  'cancel',
  'cancel-delete',
  'release',
  'question-release',
  'active-remove',
  'session-close',
  'active-due',
  'reg-peek',
  'active-settle',
  'fail-lookup',
  'fail-registration',
  'delivery-link',
  'delivery-apply',
  'delivery-drop-early',
  'delivery-lookup',
] as const;
export type StepName = (typeof STEP_NAMES)[number];

/** The steps that use lib/budgets.lua. */
const WITH_BUDGETS: ReadonlySet<StepName> = new Set<StepName>(['budget-take', 'check']);

/**
 * Phases: the steps a single Redis may compose into one script. The plan (the caller) says
 * which run, in which order, on which keys; a phase's keys must all be known before it starts.
 */
const PHASES = {
  register: ['budget-take', 'registration', 'emoji', 'active-add'],
  check: ['budget-take', 'check', 'budget-settle'],
  cancel: ['budget-take', 'cancel', 'budget-settle'],
  'cancel-cleanup': ['release', 'question-release', 'session-close', 'active-remove', 'cancel-delete'],
  sweep: ['reg-peek', 'active-settle'],
  fail: ['fail-registration', 'session-close'],
  'delivery-track': ['delivery-link', 'delivery-apply', 'delivery-drop-early'],
} as const satisfies Record<string, readonly StepName[]>;
export type PhaseName = keyof typeof PHASES;

/**
 * One step of a request: which step, on which keys (one slot), with which arguments (those
 * marked `fixed` are the same on every request of the shape: phase-plans.ts).
 */
export interface Step {
  step: StepName;
  keys: readonly string[];
  /** may be shared by every request of a kind (read-only) */
  args: readonly StepArg[];
}
type ScriptFn = (...args: ScriptArg[]) => Promise<unknown>;

const read = (file: string): string => readFileSync(new URL(`./scripts/${file}.lua`, import.meta.url), 'utf8');
const budgetLibrary = read('lib/budgets');
const runner = read('lib/steps');
const loginSteps = read('lib/login-steps');
/** the sender's account by its identifiers: steps the login chain enters (before it in the source) */
const identitySteps = read('lib/identity-steps');
/** keys.ts's schema in Lua, for the login chain when one server runs it in one call (claim-login) */
export const keyLibrary = read('lib/keys');

/** A whole script's source: claim-login gets the key schema, the identity and login steps first. */
function wholeSource(name: ScriptName): string {
  return name === 'claim-login' ? keyLibrary + identitySteps + loginSteps + read(name) : read(name);
}

/** A step's source as a script of its own (a cluster runs it, one call per step). */
function stepSource(step: StepName): string {
  return (WITH_BUDGETS.has(step) ? budgetLibrary : '') + read(`steps/${step}`);
}

/**
 * A phase's steps composed into one script: each step's source becomes a function of (KEYS,
 * ARGV). `prologue`, a plan's (phase-plans.ts), runs before the runner and writes its PLAN; without
 * one the runner reads the steps from ARGV.
 */
function phaseSource(phase: PhaseName, prologue = 'local PLAN = nil\n'): string {
  const steps: readonly StepName[] = PHASES[phase];
  const budgets = steps.some((s) => WITH_BUDGETS.has(s)) ? budgetLibrary : '';
  const bodies = steps.map((s) => `STEPS['${s}'] = function(KEYS, ARGV)\n${read(`steps/${s}`)}\nend\n`);
  // the first line names the phase's steps: fault tests recognise its EVAL by it (scriptMarker)
  return `-- STEPS['${steps.join(',')}']\n${budgets}local STEPS = {}\n${bodies.join('')}${prologue}${runner}`;
}

export type ScriptId = ScriptName | PhaseName | `step:${StepName}`;

/** The source Redis runs for a script, a phase (composed) or a step (fault tests recognise its
 * EVAL / EVALSHA on the wire). */
export function scriptSource(id: ScriptId): string {
  if (id.startsWith('step:')) return stepSource(id.slice(5) as StepName);
  if (id in PHASES) return phaseSource(id as PhaseName);
  return wholeSource(id as ScriptName);
}

/** A line of a script's source that tells its EVAL apart from the others' (shared libraries come first). */
export function scriptMarker(id: ScriptId): string {
  if (id.startsWith('step:')) return read(`steps/${id.slice(5)}`).split('\n')[0]!;
  if (id in PHASES) return `STEPS['${PHASES[id as PhaseName].join(',')}']`;
  return read(id).split('\n')[0]!;
}

const commandName = (id: ScriptId): string => 'pinauth_' + id.replace(/[-:]/g, '_');

export interface ScriptsOptions {
  /** run every step as a call of its own even on a single Redis (tests of the cluster path) */
  split?: boolean;
  /** compile phases with fixed arguments into plans (default); false: every phase call sends them all (tests) */
  plans?: boolean;
}

export class Scripts {
  /** one call per step: on a cluster (a phase's keys live in several slots) */
  readonly split: boolean;
  /** the phases' compiled plans (one Redis only) */
  readonly plans: PhasePlans;
  private readonly planned: boolean;

  constructor(private readonly client: RedisClient, opts: ScriptsOptions = {}) {
    this.split = opts.split ?? client instanceof Cluster;
    this.planned = opts.plans ?? true;
    this.plans = new PhasePlans(client, (phase, prologue) => phaseSource(phase as PhaseName, prologue));
    for (const name of SCRIPT_NAMES) {
      const declared = DECLARED_KEYS[name];
      // without numberOfKeys, ioredis takes the key count from the call's first argument
      client.defineCommand(commandName(name), declared === 'first-argument' ? { lua: wholeSource(name) } : { numberOfKeys: declared, lua: wholeSource(name) });
    }
    // steps and phases take their key count as the first argument
    for (const step of STEP_NAMES) client.defineCommand(commandName(`step:${step}`), { lua: stepSource(step) });
    for (const phase of Object.keys(PHASES) as PhaseName[]) client.defineCommand(commandName(phase), { lua: phaseSource(phase) });
  }

  private call(id: ScriptId, args: ScriptArg[]): Promise<unknown> {
    return this.command(commandName(id), args);
  }

  private command(name: string, args: ScriptArg[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, ScriptFn>)[name];
    if (!fn) throw new Error(`script ${name} not defined`);
    return fn.apply(this.client, args);
  }

  run(name: ScriptName, args: ScriptArg[]): Promise<unknown> {
    return this.call(name, args);
  }

  /** Runs a script that returns an array of strings (nil entries become ''). */
  async strings(name: ScriptName, args: ScriptArg[]): Promise<string[]> {
    return asStrings(name, await this.run(name, args));
  }

  async number(name: ScriptName, args: ScriptArg[]): Promise<number> {
    return Number(await this.run(name, args));
  }

  async string(name: ScriptName, args: ScriptArg[]): Promise<string> {
    return String(await this.run(name, args));
  }

  /** One step on its own (one slot, one call), returning its raw answer. */
  async step(s: Step, carry: string[] = []): Promise<string[]> {
    return asStrings(s.step, await this.call(`step:${s.step}`, [s.keys.length, ...s.keys, ...s.args.map(argValue), ...carry]));
  }

  /**
   * Runs the steps of a phase (in the phase's order; a plan may leave steps out) and returns
   * its answer: one composed script on a single Redis, one call per step when split.
   */
  async phase(name: PhaseName, steps: Step[]): Promise<string[]> {
    checkPlan(name, steps);
    if (this.split) return this.stepByStep(steps);
    const plan = this.planned ? this.plans.plan(name, steps) : null;
    if (plan) return asStrings(name, await this.command(plan.command, [plan.keys.length, ...plan.keys, ...plan.args]));
    const header: ScriptArg[] = [steps.length];
    for (const s of steps) header.push(s.step, s.keys.length, s.args.length);
    const keys = steps.flatMap((s) => s.keys);
    return asStrings(name, await this.call(name, [keys.length, ...keys, ...header, ...steps.flatMap((s) => s.args.map(argValue))]));
  }

  /** The runner of lib/steps.lua, a call per step. */
  private async stepByStep(steps: Step[]): Promise<string[]> {
    let carry: string[] = [];
    let skip: StepName | undefined;
    for (const s of steps) {
      if (s.step === skip) continue;
      skip = undefined;
      const out = await this.step(s, carry);
      if (out[0] !== '>' && out[0] !== '=') return out;
      if (out[0] === '=') skip = s.step;
      carry = out.slice(1);
    }
    return carry;
  }
}

function asStrings(name: string, out: unknown): string[] {
  if (!Array.isArray(out)) throw new Error(`script ${name} returned ${typeof out}`);
  return out.map((v) => (v === null || v === undefined ? '' : String(v)));
}

/** A plan may use only its phase's steps: the composed script holds no others. */
function checkPlan(name: PhaseName, steps: Step[]): void {
  const allowed: readonly StepName[] = PHASES[name];
  for (const s of steps) if (!allowed.includes(s.step)) throw new Error(`phase ${name} has no step ${s.step}`);
}
