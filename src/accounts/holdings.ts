import { Cluster, type Redis } from 'ioredis';
import type { SessionView } from '../auth/sessions.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import { decodeOrigin } from '../registrations/origin.js';
import type { AuditFilter, AuditPage, AuditRecord } from './audit.js';

/**
 * Everything the service holds about a person, one Holding per kind of data (docs/accounts.md,
 * "Erase" and "Export"): each can export what it holds and erase it. Erasing is idempotent (a
 * second run finds nothing and answers 0), and touches one key per command, so it runs as it is
 * on a Redis Cluster.
 *
 * A holding is handed the person (the user id and every identifier the account was known by,
 * read once at the start of an erase and kept in its plan), not the user id alone: once the user
 * record is gone, a resumed erase still knows the phone, LID and BSUID to look for.
 *
 * Some families have no index by person: message marks (`msg:`, the claim's `…|sid|uid`), kept
 * senders (`sender:`), registrations holding the user's result or awaiting their answer, delivery
 * records (`out:`, owner), rate-limit keys named after a phone or user id, identifier links an
 * account no longer shows (an old BSUID stays linked), OpenID interactions. They are found by one
 * walk of the keyspace (`SCAN` on each primary, names matched by family, values read only for
 * those families), shared by every holding of one run: `keysAbout()`.
 */

export interface Identifier {
  kind: string;
  value: string;
}

export interface Person {
  userId: string;
  /** canonical E.164, null when the account has none */
  phone: string | null;
  /** every identifier: stable kinds (`lid`, `bsuid`) and the phone (kind `phone`) */
  identifiers: Identifier[];
}

/** What one walk of the keyspace found about the person, by family (full key names). */
export interface KeysAbout {
  links: string[];
  messages: string[];
  senders: string[];
  registrations: string[];
  confirmations: string[];
  deliveries: string[];
  limits: string[];
  oidc: string[];
  /** keys under the user's hash tag: user record, session index, sessions, rotations, idempotency keys */
  account: string[];
  /** other people's records naming the person as who blocked them (`blockedBy`) */
  blockedBy: string[];
}

/** One run of an erase or an export: the person and the walk, made once and shared. */
export interface Subject {
  person: Person;
  keysAbout(): Promise<KeysAbout>;
}

export interface Holding {
  /** the receipt's and the export's name for it */
  name: string;
  export(s: Subject): Promise<unknown>;
  /** removes it; how many keys (or records) went; 0 when there was nothing (a retry) */
  erase(s: Subject): Promise<number>;
}

/** The OpenID logins of a person (oidc/logins.ts implements it; handed in: it is a higher layer). */
export interface OpenIdLogins {
  list(userId: string): Promise<unknown[]>;
  endAll(userId: string): Promise<number>;
}

/** The person's queued, finished and failed jobs (queues/person-jobs.ts implements it). */
export type JobsHolding = Holding;

/** The directory's search index (B1's accounts/directory.ts): what erase needs of it. */
export interface PersonIndex {
  holds(userId: string): Promise<boolean>;
  unindex(userId: string): Promise<unknown>;
}

/** The audit trail as the erase and export use it; `forget` drops every event about the user. */
export interface PersonEvents {
  list(f: AuditFilter): Promise<AuditPage>;
  forget?(userId: string): Promise<number>;
}

/** The values the person is found by in other keys' names and values: user id, phone (with and without `+`), each identifier. */
export function tokensOf(p: Person): string[] {
  const out = new Set<string>([p.userId]);
  for (const id of p.identifiers) out.add(id.value);
  if (p.phone) out.add(p.phone);
  for (const t of [...out]) if (/^\+\d{6,}$/.test(t)) out.add(t.slice(1));
  return [...out].filter((t) => t.length >= 6);
}

const WORD = /[0-9A-Za-z]/;

/** Whether `text` names the person: one of the tokens, not as part of a longer run of letters or digits. */
export function mentions(text: string, tokens: readonly string[]): boolean {
  for (const t of tokens) {
    for (let at = text.indexOf(t); at >= 0; at = text.indexOf(t, at + 1)) {
      const before = at > 0 ? text.charAt(at - 1) : '';
      const after = text.charAt(at + t.length);
      if (!WORD.test(before) && !WORD.test(after)) return true;
    }
  }
  return false;
}

/** The primaries to walk: every master of a cluster, or the one server. */
export function primaries(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** Calls `each` with every page of key names under `match` on every primary. */
export async function walkKeys(redis: RedisClient, match: string, each: (node: Redis, names: string[]) => Promise<void>): Promise<void> {
  for (const node of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, names] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      if (names.length > 0) await each(node, names);
    } while (cursor !== '0');
  }
}

type Family = keyof KeysAbout;

/** The one walk of a run: every key under the prefix, classified by family, values read for the families that hold ids in values. */
export async function findKeysAbout(redis: RedisClient, keys: Keys, person: Person): Promise<KeysAbout> {
  const found: KeysAbout = {
    links: [],
    messages: [],
    senders: [],
    registrations: [],
    confirmations: [],
    deliveries: [],
    limits: [],
    oidc: [],
    account: [],
    blockedBy: [],
  };
  const actors = new Set(actorsOf(person.userId));
  const p = `${keys.prefix}:`;
  const tokens = tokensOf(person);
  const uid = person.userId;
  const userTag = `{u${uid}}`;
  const plan = keys.erasePlan(uid);
  const addrs = new Set(person.identifiers.map((i) => (i.kind === 'phone' ? i.value : `${i.kind}:${i.value}`)));
  const tail = (name: string, head: string): string => name.slice(head.length, name.endsWith('}') ? -1 : undefined);
  await walkKeys(redis, `${p}*`, async (node, names) => {
    const reads: { name: string; family: Family; read: 'get' | 'reg' | 'out' | 'type' | 'blocked' }[] = [];
    for (const name of names) {
      const rest = name.slice(p.length);
      if (name.includes(userTag)) {
        if (name !== plan) found.account.push(name);
      } else if (rest.startsWith('user:{u')) reads.push({ name, family: 'blockedBy', read: 'blocked' });
      else if (rest.startsWith('phone:{p') || rest.startsWith('ident:{i')) {
        const value = tail(rest, rest.startsWith('phone:') ? 'phone:{p' : 'ident:{i');
        const v = rest.startsWith('phone:') ? value : value.slice(value.indexOf(':') + 1);
        if (tokens.includes(v)) found.links.push(name);
        else reads.push({ name, family: 'links', read: 'get' });
      } else if (rest.startsWith('msg:{m')) reads.push({ name, family: 'messages', read: 'get' });
      else if (rest.startsWith('sender:')) reads.push({ name, family: 'senders', read: 'get' });
      else if (rest.startsWith('reg:{r')) reads.push({ name, family: 'registrations', read: 'reg' });
      else if (rest.startsWith('confirm:{p')) {
        if (addrs.has(tail(rest, 'confirm:{p'))) found.confirmations.push(name);
      } else if (rest.startsWith('out:{o')) reads.push({ name, family: 'deliveries', read: 'out' });
      else if (rest.startsWith('rl:')) {
        if (mentions(rest, tokens)) found.limits.push(name);
      } else if (rest.startsWith('oidc:')) {
        if (mentions(rest, tokens)) found.oidc.push(name);
        else reads.push({ name, family: 'oidc', read: 'type' });
      }
    }
    if (reads.length === 0) return;
    const pipe = node.pipeline();
    for (const r of reads) {
      if (r.read === 'get') pipe.get(r.name);
      else if (r.read === 'reg') pipe.hmget(r.name, 'userId', 'askedOf', 'result');
      else if (r.read === 'out') pipe.hget(r.name, 'owner');
      else if (r.read === 'blocked') pipe.hget(r.name, BLOCKED_BY);
      else pipe.type(r.name);
    }
    const replies = (await pipe.exec()) ?? [];
    const typed: { name: string; type: string }[] = [];
    reads.forEach((r, i) => {
      const [err, value] = replies[i] ?? [null, null];
      if (err || value === null || value === undefined) return;
      if (r.read === 'get') {
        const v = String(value);
        const hit = r.family === 'links' ? v === uid : r.family === 'messages' ? v.split('|').includes(uid) : mentions(v, tokens);
        if (hit) found[r.family].push(r.name);
      } else if (r.read === 'reg') {
        const [userId, askedOf, result] = value as (string | null)[];
        // asked of their phone and not claimed by anyone: theirs; claimed by another account
        // (the phone's new account, during a resumed erase): that account's
        const asked = askedOf !== null && askedOf !== undefined && addrs.has(askedOf) && !userId;
        if (userId === uid || asked || (result && mentions(result, [uid]))) {
          found.registrations.push(r.name);
        }
      } else if (r.read === 'out') {
        if (value === uid) found.deliveries.push(r.name);
      } else if (r.read === 'blocked') {
        if (actors.has(String(value))) found.blockedBy.push(r.name);
      } else typed.push({ name: r.name, type: String(value) });
    });
    // OpenID records that name the account in their value (interactions, a session's login)
    const values = typed.filter((t) => t.type === 'string' || t.type === 'hash');
    if (values.length === 0) return;
    const read = node.pipeline();
    for (const t of values) {
      if (t.type === 'string') read.get(t.name);
      else read.hvals(t.name);
    }
    const got = (await read.exec()) ?? [];
    values.forEach((t, i) => {
      const [err, v] = got[i] ?? [null, null];
      if (err || v === null || v === undefined) return;
      const text = Array.isArray(v) ? v.join('\n') : String(v);
      if (mentions(text, tokens)) found.oidc.push(t.name);
    });
  });
  return found;
}

/** Deletes keys one command each (they live in different slots on a cluster); how many existed. */
export async function removeKeys(redis: RedisClient, names: readonly string[]): Promise<number> {
  const done = await Promise.all([...new Set(names)].map((k) => redis.unlink(k)));
  return done.reduce((n, d) => n + d, 0);
}

const iso = (ms: string | null | undefined): string | null => (ms && Number(ms) > 0 ? new Date(Number(ms)).toISOString() : null);

/** The holdings of the layers at and below accounts/, in erase order; the higher layers' are handed in. */
export function coreHoldings(deps: {
  redis: RedisClient;
  keys: Keys;
  scripts: Scripts;
  /** the app's sessions as their owner sees them */
  listSessions(userId: string): Promise<SessionView[]>;
  oidc: OpenIdLogins;
  jobs?: JobsHolding;
  directory?: PersonIndex;
  audit: PersonEvents;
}): Holding[] {
  const { redis, keys, scripts } = deps;
  const sessions: Holding = {
    name: 'sessions',
    async export({ person }) {
      const list = await deps.listSessions(person.userId);
      return list.map(({ current: _current, ...s }) => ({ kind: 'app', ...s }));
    },
    // every open session closes at once (their tokens are refused from the next request on)
    erase: ({ person }) => scripts.run('end-sessions', [keys.userSessions(person.userId)], [keys.session(person.userId, ''), person.userId, '*']),
  };

  const oidc: Holding = {
    name: 'openid',
    export: ({ person }) => deps.oidc.list(person.userId),
    async erase(s) {
      const uid = s.person.userId;
      // grants, codes, tokens, provider sessions (and the sign-out mark it writes, removed below)
      const ended = await deps.oidc.endAll(uid);
      const found = await s.keysAbout();
      const rest = await removeKeys(redis, [...found.oidc, keys.oidcSignedOut(uid), keys.oidcAccount(uid), keys.oidcLogins(uid)]);
      return ended + rest;
    },
  };

  const identifiers: Holding = {
    name: 'identifiers',
    async export({ person }) {
      const linked = await Promise.all(person.identifiers.map((i) => redis.get(keys.identity(i.kind, i.value))));
      return person.identifiers.map((i, n) => ({ kind: i.kind, value: i.value, linked: linked[n] === person.userId }));
    },
    async erase(s) {
      const { person } = s;
      // a link goes only while it names this account (a recycled number may be someone else's now)
      const own = person.identifiers.map((i) => keys.identity(i.kind, i.value));
      const found = await s.keysAbout();
      const candidates = [...new Set([...own, ...found.links])];
      const values = await Promise.all(candidates.map((k) => redis.get(k)));
      return removeKeys(
        redis,
        candidates.filter((_, i) => values[i] === person.userId),
      );
    },
  };

  const registrations: Holding = {
    name: 'registrations',
    async export(s) {
      const found = await s.keysAbout();
      const rows = await Promise.all(found.registrations.map((k) => redis.hmget(k, 'pinId', 'state', 'expiresAt', 'verifiedAt', 'origin')));
      // never the PIN hash, the result or its tokens
      return rows.map(([pinId, state, expiresAt, verifiedAt, origin]) => ({
        pinId,
        state,
        expiresAt: iso(expiresAt),
        verifiedAt: iso(verifiedAt),
        ...decodeOrigin(origin ?? ''),
      }));
    },
    async erase(s) {
      return removeKeys(redis, (await s.keysAbout()).registrations);
    },
  };

  const confirmations: Holding = {
    name: 'confirmations',
    async export(s) {
      const found = await s.keysAbout();
      const all = await Promise.all(found.confirmations.map((k) => redis.hgetall(k)));
      return all.flatMap((h) =>
        Object.entries(h).map(([n, raw]) => {
          try {
            const q = JSON.parse(raw) as { x?: number; o?: string; a?: number };
            return { number: n, askedAt: iso(String(q.a ?? 0)), expiresAt: iso(String(q.x ?? 0)), ...decodeOrigin(q.o ?? '') };
          } catch {
            return { number: n };
          }
        }),
      );
    },
    async erase(s) {
      return removeKeys(redis, (await s.keysAbout()).confirmations);
    },
  };

  const messages: Holding = {
    name: 'messages',
    async export(s) {
      // a chat message's id, seen within the last day, that signed the person in
      return (await s.keysAbout()).messages.map((k) => ({ messageId: k.slice(k.indexOf(':msg:{m') + 7, -1) }));
    },
    async erase(s) {
      return removeKeys(redis, (await s.keysAbout()).messages);
    },
  };

  const senders: Holding = {
    name: 'senders',
    async export(s) {
      const found = await s.keysAbout();
      const raw = await Promise.all(found.senders.map((k) => redis.get(k)));
      return raw.flatMap((r) => {
        try {
          return r ? [JSON.parse(r) as unknown] : [];
        } catch {
          return [];
        }
      });
    },
    async erase(s) {
      return removeKeys(redis, (await s.keysAbout()).senders);
    },
  };

  const deliveries: Holding = {
    name: 'deliveries',
    async export(s) {
      const found = await s.keysAbout();
      const all = await Promise.all(found.deliveries.map((k) => redis.hgetall(k)));
      return all.map((h, i) => ({
        messageId: found.deliveries[i]!.slice(found.deliveries[i]!.indexOf(':out:{o') + 7, -1),
        status: h.status ?? null,
        channel: h.channel ?? null,
        kind: h.kind ?? null,
        queuedAt: iso(h.queuedAt),
        sentAt: iso(h.sentAt),
        deliveredAt: iso(h.deliveredAt),
        readAt: iso(h.readAt),
        failedAt: iso(h.failedAt),
      }));
    },
    async erase(s) {
      const found = await s.keysAbout();
      const links = await Promise.all(found.deliveries.map((k) => redis.hmget(k, 'channel', 'gatewayId')));
      const gateway = links.flatMap(([channel, gatewayId]) =>
        channel && gatewayId ? [keys.outboundByGateway(channel, gatewayId), keys.outboundEarly(channel, gatewayId)] : [],
      );
      return removeKeys(redis, [...gateway, ...found.deliveries]);
    },
  };

  const limits: Holding = {
    name: 'limits',
    async export(s) {
      // budgets spent under the person's phone or id (their names only: a count of a minute)
      return (await s.keysAbout()).limits.map((k) => k.slice(keys.prefix.length + 1));
    },
    async erase(s) {
      return removeKeys(redis, (await s.keysAbout()).limits);
    },
  };

  const directory: Holding = {
    name: 'directory',
    export: async () => null,
    async erase({ person }) {
      if (!deps.directory) return 0;
      const held = await deps.directory.holds(person.userId);
      await deps.directory.unindex(person.userId);
      return held ? 1 : 0;
    },
  };

  const apiKeys: Holding = {
    name: 'keys',
    async export({ person }) {
      return (await keysMadeBy(redis, keys, person.userId)).map((k) => ({ id: k.id, name: k.name, createdAt: iso(k.createdAt) }));
    },
    // a key they made stays the deployment's (it keeps working); who made it is forgotten
    async erase({ person }) {
      const made = await keysMadeBy(redis, keys, person.userId);
      await Promise.all(made.map((k) => redis.hset(keys.apiKey(k.id), 'createdBy', ERASED)));
      return made.length;
    },
  };

  const blocks: Holding = {
    name: 'blocks',
    // whom they blocked is about those people, not them: not in their export
    export: async () => null,
    // the block stays; who made it is forgotten (only where it still names them)
    async erase(s) {
      const found = await s.keysAbout();
      const actors = new Set(actorsOf(s.person.userId));
      const now = await Promise.all(found.blockedBy.map((k) => redis.hget(k, BLOCKED_BY)));
      const doomed = found.blockedBy.filter((_, i) => actors.has(now[i] ?? ''));
      await Promise.all(doomed.map((k) => redis.hset(k, BLOCKED_BY, ERASED)));
      return doomed.length;
    },
  };

  const audit: Holding = {
    name: 'events',
    async export({ person }) {
      const events: AuditRecord[] = [];
      let cursor: string | undefined;
      // bounded: 25 pages of 200, the newest first
      for (let page = 0; page < 25; page++) {
        const got = await deps.audit.list({ userId: person.userId, cursor, limit: 200 });
        events.push(...got.events);
        if (got.next === null) break;
        cursor = got.next;
      }
      return events;
    },
    erase: ({ person }) => (deps.audit.forget ? deps.audit.forget(person.userId) : forgetInStream(redis, keys, person)),
  };

  const account: Holding = {
    name: 'account',
    async export({ person }) {
      const h = await redis.hgetall(keys.user(person.userId));
      let roles: unknown = [];
      try {
        roles = JSON.parse(h.roles ?? '[]');
      } catch {
        roles = [];
      }
      return { ...h, roles, createdAt: iso(h.createdAt) };
    },
    async erase(s) {
      const uid = s.person.userId;
      const found = await s.keysAbout();
      // sessions opened since the walk (a login already past its identity steps) go too
      const late = await redis.zrange(keys.userSessions(uid), '0', '-1');
      const index = [keys.userSessions(uid), ...late.flatMap((sid) => [keys.session(uid, sid), keys.rotation(uid, sid)])];
      return removeKeys(redis, [...found.account, ...index, keys.user(uid)]);
    },
  };

  // the order of an erase: no session or login path left to a half-erased account (docs/accounts.md)
  return [
    sessions,
    oidc,
    identifiers,
    registrations,
    confirmations,
    messages,
    senders,
    deliveries,
    limits,
    ...(deps.jobs ? [deps.jobs] : []),
    directory,
    apiKeys,
    blocks,
    audit,
    account,
  ];
}

/** What an erased person's name is replaced with where a record must stay (audit.ts ERASED_ACTOR, an API key's maker). */
const ERASED = 'erased';

/** The user record's field naming who blocked the account (docs/accounts.md, "Block"). */
const BLOCKED_BY = 'blockedBy';

/** How the person appears as an actor in records (actor.ts actorText). */
function actorsOf(userId: string): string[] {
  return [`admin:${userId}`, `user:${userId}`];
}

/** The API keys the person made (as an admin, or themselves), from the deployment's key index. */
async function keysMadeBy(redis: RedisClient, keys: Keys, userId: string): Promise<{ id: string; name: string | null; createdAt: string | null }[]> {
  const ids = await redis.zrange(keys.apiKeys(), '0', '-1');
  const rows = await Promise.all(ids.map((id) => redis.hmget(keys.apiKey(id), 'createdBy', 'name', 'createdAt')));
  const mine = new Set(actorsOf(userId));
  return ids.flatMap((id, i) => {
    const [by, name, createdAt] = rows[i] ?? [];
    return by && mine.has(by) ? [{ id, name: name ?? null, createdAt: createdAt ?? null }] : [];
  });
}

/**
 * The audit trail's events about the person, when the trail has no `forget` of its own: every
 * entry of the stream (bounded by its retention) naming the user id, phone or an identifier is
 * deleted.
 */
async function forgetInStream(redis: RedisClient, keys: Keys, person: Person): Promise<number> {
  const tokens = tokensOf(person);
  let start = '-';
  let removed = 0;
  for (;;) {
    const rows = await redis.xrange(keys.audit(), start, '+', 'COUNT', 1000);
    const doomed = rows.filter(([, kv]) => mentions(kv.join('\n'), tokens)).map(([id]) => id);
    if (doomed.length > 0) removed += await redis.xdel(keys.audit(), ...doomed);
    if (rows.length < 1000) return removed;
    start = `(${rows[rows.length - 1]![0]}`;
  }
}
