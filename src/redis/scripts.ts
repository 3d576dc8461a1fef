import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection.js';

/**
 * The Lua scripts: one static file per state change (src/redis/scripts/<name>.lua, copied beside
 * the build), each opening with its contract (KEYS, ARGV, Reply). Shared Lua (scripts/lib/) is
 * included statically: a line `--- @include "lib/x.lua"` is replaced by that file's text when
 * the script is loaded, as BullMQ does with its commands. ioredis sends EVALSHA and falls back
 * to EVAL once per connection.
 *
 * Every script takes its keys as KEYS and touches one slot (keys.ts gives keys that change
 * together one hash tag), so it runs as is on a Redis Cluster. A request whose keys span slots
 * is a sequence of these calls, made in TypeScript (registrations/flows.ts, auth/login-chain.ts,
 * queues/workers), each call idempotent so that a retry after a crash between two finishes the
 * work instead of doubling it.
 *
 * This module is the one place that knows each script's key count and the shape of its reply:
 * `Scripts.run` decodes a reply once into the typed object below.
 */
export type ScriptArg = string | number;

/** A budget refused the request: the wait until it has a point again, and which budget (limits.ts). */
export interface Limited {
  kind: 'limited';
  waitMs: number;
  /** the budget's place (1-based) in the request's list */
  index: number;
}

/** A registration's state (the registration hash: keys.ts). */
export type RegistrationState = 'pending' | 'awaiting' | 'claimed' | 'verified' | 'collected' | 'denied' | 'failed';
const STATES = ['pending', 'awaiting', 'claimed', 'verified', 'collected', 'denied', 'failed'] as const;

export type RegisterOutcome = 'existing' | 'decoy' | 'again' | 'denied' | 'created' | 'contested';
export interface RegisterAnswer {
  kind: 'answer';
  outcome: RegisterOutcome;
  pinId: string;
  msLeft: number;
  state: RegistrationState;
  expiresAt: number;
  /** the emoji string shown: 0 the client's own, n the n-th candidate */
  candidateIndex: number;
}
export type RegisterReply = { kind: 'refused' } | RegisterAnswer | { kind: 'create' | 'decoy'; expiresAt: number };

export type CheckReply =
  | Limited
  | { kind: 'not_found' | 'pending' | 'awaiting' | 'denied' | 'failed' | 'expired'; pinId: string }
  | { kind: 'verified'; pinId: string; resultJson: string; userId: string };

export type CancelFindReply =
  | { kind: 'not_found' | 'expired' }
  | { kind: 'cancelled'; pinId: string; state: RegistrationState; emojiHash: string; askedOf: string; sessionId: string; userId: string };

/** What the login chain's last step said (lib/login-steps.lua, lib/identity-steps.lua). */
export type ClaimReply =
  | { kind: 'duplicate' | 'busy' | 'no_match' | 'unanswered' }
  | { kind: 'renumbered'; userId: string; changed: boolean; linked: string[]; conflict: boolean }
  | { kind: 'ask'; pinId: string; pinHash: string; expiresAt: number; origin: string; question: string }
  | { kind: 'which'; open: { question: string; origin: string; expiresAt: number }[] }
  | { kind: 'denied'; pinId: string; pinHash: string; origin: string }
  /** the sender's account is blocked: the registration ended denied */
  | { kind: 'blocked'; pinId: string; pinHash: string; origin: string; userId: string }
  | { kind: 'done'; sessionOpen: boolean }
  | { kind: 'completed'; pinId: string; pinHash: string; resultJson: string; origin: string }
  | {
      kind: 'claimed';
      pinId: string;
      pinHash: string;
      sessionId: string;
      refreshJti: string;
      user: { id: string; name: string; surname: string; phone: string; rolesJson: string; createdAt: number };
      /** kinds of the identifiers newly linked to the account */
      linked: string[];
      recycled: boolean;
      conflict: boolean;
      numberChanged: boolean;
      /** the registration's origin (registrations/origin.ts, encoded) */
      origin: string;
      /** this job made the account (or resumed the claim of the attempt that may have) */
      created: boolean;
    }
  /** one step run (a cluster): the next step, the chain's state, and the keys it names as (kind, a, b) */
  | { kind: 'next'; step: string; stateJson: string; keys: [string, string, string][] };

/** send-begin.lua: what earlier attempts of an outbound job did (src/queues/send-ledger.ts). */
export type SendBeginReply = { state: 'new' } | { state: 'uncertain' } | { state: 'sent'; providerMessageId: string | null };

export type RotateReply = { kind: 'ok' | 'closed' | 'nouser' | 'reuse' } | { kind: 'again'; pairJson: string } | { kind: 'roles'; rolesJson: string };

/** user-block.lua: `fresh` false when the account was blocked already (its first block's time is kept). */
export type UserBlockReply = { kind: 'blocked'; blockedAt: number; fresh: boolean } | { kind: 'unblocked' | 'none' | 'missing' };

export interface SessionRow {
  sessionId: string;
  createdAt: string;
  lastUsedAt: string;
  origin: string;
  expiresAt: string;
}

/** A reply as a list of strings (nil entries, and a missing list, become ''). */
function list(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((v) => (v === null || v === undefined ? '' : String(v)));
}

function one<K extends string>(kind: string, allowed: readonly K[], name: string): K {
  if ((allowed as readonly string[]).includes(kind)) return kind as K;
  throw new Error(`script ${name} replied ${JSON.stringify(kind)}`);
}

const limited = (r: string[]): Limited => ({ kind: 'limited', waitMs: Number(r[1]), index: Number(r[2]) });

/** Each script: its key count (null: the call says, as the keys vary) and its reply's decoder. */
interface ScriptDef<R> {
  keys: number | null;
  decode(raw: unknown): R;
}
const def = <R>(keys: number | null, decode: (raw: unknown) => R): ScriptDef<R> => ({ keys, decode });
const count = (raw: unknown): number => Number(raw);

const DEFS = {
  'budget-take': def(null, (raw): Limited | { kind: 'busy'; index: number } | { kind: 'ok' } => {
    const r = list(raw);
    if (r[0] === 'limited') return limited(r);
    if (r[0] === 'busy') return { kind: 'busy', index: Number(r[1]) };
    return { kind: one(r[0]!, ['ok'] as const, 'budget-take') };
  }),
  'budget-settle': def(null, count),
  register: def(null, (raw): RegisterReply => {
    const r = list(raw);
    if (r[0] === 'refused') return { kind: 'refused' };
    if (r[0] === 'create' || r[0] === 'decoy') return { kind: r[0], expiresAt: Number(r[1]) };
    const [, outcome = '', pinId = '', msLeft, state = '', expiresAt, index] = r;
    const allowed = ['existing', 'decoy', 'again', 'denied', 'created', 'contested'] as const;
    return {
      kind: 'answer',
      outcome: one(outcome, allowed, 'register'),
      pinId,
      msLeft: Number(msLeft),
      state: one(state, STATES, 'register'),
      expiresAt: Number(expiresAt),
      candidateIndex: Number(index),
    };
  }),
  'emoji-hold': def(1, (raw) => one(list(raw)[0]!, ['created', 'contested', 'taken', 'decoy'] as const, 'emoji-hold')),
  'active-add': def(1, count),
  check: def(null, (raw): CheckReply => {
    const r = list(raw);
    const [kind = '', pinId = '', resultJson = '', userId = ''] = r;
    if (kind === 'limited') return limited(r);
    if (kind === 'verified') return { kind, pinId, resultJson, userId };
    return { kind: one(kind, ['not_found', 'pending', 'awaiting', 'denied', 'failed', 'expired'] as const, 'check'), pinId };
  }),
  'cancel-find': def(1, (raw): CancelFindReply => {
    const [kind = '', pinId = '', state = '', emojiHash = '', askedOf = '', sessionId = '', userId = ''] = list(raw);
    if (kind === 'cancelled') return { kind, pinId, state: one(state, STATES, 'cancel-find'), emojiHash, askedOf, sessionId, userId };
    return { kind: one(kind, ['not_found', 'expired'] as const, 'cancel-find') };
  }),
  release: def(1, count),
  'question-release': def(1, count),
  'session-close': def(3, count),
  'active-remove': def(1, count),
  'cancel-delete': def(1, (raw) => one(String(raw), ['cancelled', 'changed'] as const, 'cancel-delete')),
  'active-due': def(1, (raw) => {
    const [wait, more, ...due] = list(raw);
    return { waitMs: Number(wait), more: more === '1', due };
  }),
  'reg-peek': def(1, (raw) => {
    const [pinId = '', state = '', expiresAt = '', origin = ''] = list(raw);
    return { pinId, state, expiresAt, origin };
  }),
  'active-settle': def(1, (raw) => {
    const r = list(raw);
    const expired: { pinHash: string; pinId: string }[] = [];
    for (let i = 0; i + 1 < r.length; i += 2) expired.push({ pinHash: r[i]!, pinId: r[i + 1]! });
    return expired;
  }),
  'fail-lookup': def(1, (raw) => list(raw)[0] ?? null),
  'fail-registration': def(1, (raw) => {
    const [kind, pinId = '', sessionId = '', userId = '', first] = list(raw);
    return kind === 'failed' ? { kind: 'failed' as const, pinId, sessionId, userId, first: first === '1' } : { kind: 'none' as const };
  }),
  'delivery-link': def(2, list),
  'delivery-apply': def(1, (raw) => one(String(raw), ['updated', 'stale', 'unknown'] as const, 'delivery-apply')),
  'delivery-drop-early': def(1, count),
  'delivery-lookup': def(2, (raw) => {
    const [kind, jobId = ''] = list(raw);
    return kind === 'job' ? { kind: 'job' as const, jobId } : { kind: 'unknown' as const };
  }),
  'claim-login': def(null, decodeClaim),
  'complete-login': def(1, (raw) => {
    const n = Number(raw);
    return n === 1 ? 'completed' : n === 2 ? 'already' : 'gone';
  }),
  'rotate-session': def(4, (raw): RotateReply => {
    const [kind = '', kept = ''] = list(raw);
    if (kind === 'again') return { kind, pairJson: kept };
    if (kind === 'roles') return { kind, rolesJson: kept };
    return { kind: one(kind, ['ok', 'closed', 'nouser', 'reuse'] as const, 'rotate-session') };
  }),
  'end-sessions': def(1, count),
  'user-block': def(1, (raw): UserBlockReply => {
    const [kind = '', at = '', fresh = ''] = list(raw);
    if (kind === 'blocked') return { kind, blockedAt: Number(at), fresh: fresh === '1' };
    return { kind: one(kind, ['unblocked', 'none', 'missing'] as const, 'user-block') };
  }),
  'list-sessions': def(1, (raw) => {
    const r = list(raw);
    const rows: SessionRow[] = [];
    for (let i = 0; i + 4 < r.length; i += 5) {
      rows.push({ sessionId: r[i]!, createdAt: r[i + 1]!, lastUsedAt: r[i + 2]!, origin: r[i + 3]!, expiresAt: r[i + 4]! });
    }
    return rows;
  }),
  'directory-index': def(3, count),
  'audit-append': def(null, list),
  'send-begin': def(1, (raw): SendBeginReply => {
    const [state = '', gatewayId = ''] = list(raw);
    if (state === 'sent') return { state, providerMessageId: gatewayId || null };
    return { state: one(state, ['new', 'uncertain'] as const, 'send-begin') };
  }),
  'set-roles': def(1, (raw) => one(list(raw)[0] ?? '', ['ok', 'nouser', 'changed'] as const, 'set-roles')),
} satisfies Record<string, ScriptDef<unknown>>;

function decodeClaim(raw: unknown): ClaimReply {
  const r = list(raw);
  const kind = r[0] ?? '';
  switch (kind) {
    case 'duplicate':
    case 'busy':
    case 'no_match':
    case 'unanswered':
      return { kind };
    case 'renumbered':
      return { kind, userId: r[1] ?? '', changed: r[2] === '1', linked: kinds(r[3]), conflict: r[4] === '1' };
    case 'ask':
      return { kind, pinId: r[1] ?? '', pinHash: r[2] ?? '', expiresAt: Number(r[3]), origin: r[4] ?? '', question: r[5] ?? '' };
    case 'which': {
      const open: { question: string; origin: string; expiresAt: number }[] = [];
      for (let i = 1; i + 2 < r.length; i += 3) open.push({ question: r[i]!, origin: r[i + 1]!, expiresAt: Number(r[i + 2]) });
      return { kind, open };
    }
    case 'denied':
      return { kind, pinId: r[1] ?? '', pinHash: r[2] ?? '', origin: r[3] ?? '' };
    case 'blocked':
      return { kind, pinId: r[1] ?? '', pinHash: r[2] ?? '', origin: r[3] ?? '', userId: r[4] ?? '' };
    case 'done':
      return { kind, sessionOpen: r[1] === '1' };
    case 'completed':
      return { kind, pinId: r[1] ?? '', pinHash: r[2] ?? '', resultJson: r[3] ?? '', origin: r[4] ?? '' };
    case 'claimed': {
      const [
        ,
        pinId = '',
        pinHash = '',
        sessionId = '',
        refreshJti = '',
        id = '',
        name = '',
        surname = '',
        phone = '',
        rolesJson = '',
        linked,
        recycled,
        conflict,
        numberChanged,
        origin = '',
        createdAt,
        created,
      ] = r;
      const user = { id, name, surname, phone, rolesJson, createdAt: Number(createdAt) || 0 };
      return {
        kind,
        pinId,
        pinHash,
        sessionId,
        refreshJti,
        user,
        linked: kinds(linked),
        recycled: recycled === '1',
        conflict: conflict === '1',
        numberChanged: numberChanged === '1',
        origin,
        created: created === '1',
      };
    }
    case 'next': {
      const keys: [string, string, string][] = [];
      for (let at = 3; at + 2 < r.length; at += 3) keys.push([r[at]!, r[at + 1]!, r[at + 2]!]);
      return { kind, step: r[1] ?? '', stateJson: r[2] ?? '', keys };
    }
    default:
      throw new Error(`script claim-login replied ${JSON.stringify(kind)}`);
  }
}

const kinds = (csv: string | undefined): string[] => (csv ? csv.split(',') : []);

export type ScriptName = keyof typeof DEFS;
export type Reply<N extends ScriptName> = ReturnType<(typeof DEFS)[N]['decode']>;
export const SCRIPT_NAMES = Object.keys(DEFS) as ScriptName[];

const INCLUDE = /^--- @include "([^"]+)"$/gm;
const read = (file: string): string => readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8');

/** A script's source with its includes expanded (once each; a library included twice is a mistake). */
export function scriptSource(name: ScriptName): string {
  const seen = new Set<string>();
  const expand = (text: string): string =>
    text.replace(INCLUDE, (_, file: string) => {
      if (seen.has(file)) throw new Error(`${file} included twice in ${name}.lua`);
      seen.add(file);
      return expand(read(file).trimEnd());
    });
  return expand(read(`${name}.lua`));
}

/** A library's text (scripts/lib/), as an include puts it in (test/redis/key-schema.test.ts checks lib/keys.lua). */
export const scriptLibrary = (file: string): string => read(`lib/${file}`);

/** The first line of a script: its name, which tells its EVAL apart from the others' (fault tests). */
export function scriptMarker(name: ScriptName): string {
  return read(`${name}.lua`).split('\n')[0]!;
}

const commandName = (name: ScriptName): string => `pinauth_${name.replace(/-/g, '_')}`;
type ScriptFn = (...args: ScriptArg[]) => Promise<unknown>;

export class Scripts {
  constructor(private readonly client: RedisClient) {
    // the key count is always the call's first argument (ioredis reads it when none is declared)
    for (const name of SCRIPT_NAMES) client.defineCommand(commandName(name), { lua: scriptSource(name) });
  }

  /** Runs one script on its keys (one slot) and decodes its reply. */
  async run<N extends ScriptName>(name: N, keys: readonly string[], args: readonly ScriptArg[] = []): Promise<Reply<N>> {
    const d: ScriptDef<unknown> = DEFS[name];
    if (d.keys !== null && keys.length !== d.keys) throw new Error(`script ${name} takes ${d.keys} keys, given ${keys.length}`);
    const fn = (this.client as unknown as Record<string, ScriptFn>)[commandName(name)];
    if (!fn) throw new Error(`script ${name} not defined`);
    return d.decode(await fn.apply(this.client, [keys.length, ...keys, ...args])) as Reply<N>;
  }
}
