import { parseArgs } from 'node:util';
import { ApiKeys, type ApiKeyView, checkKeyInput, parseKeyId } from '../accounts/api-keys.js';
import { ADMIN_SCOPES, type AdminScope, SYSTEM } from '../accounts/actor.js';
import { AuditTrail } from '../accounts/audit.js';
import { AccountRoles, ADMIN_ROLE_NAME } from '../accounts/roles.js';
import { parseRoles } from '../auth/roles.js';
import { ConfigError, loadConfig } from '../config.js';
import { AppError } from '../errors.js';
import { canonicalPhone } from '../identity/phone.js';
import type { RedisClient } from '../redis/connection.js';
import { connect, waitReady } from '../redis/connection.js';
import { keys as makeKeys, type Keys } from '../redis/keys.js';
import { Scripts } from '../redis/scripts.js';
import { redisWhere } from './banner.js';

/**
 * `npm run accounts -- <command>` (`node dist/src/bin/accounts.js`): what an operator does from
 * a shell, before there is any admin to do it in the console (docs/operations.md, "Admins and
 * API keys"). Reads the same environment as the service (REDIS_URL, KEY_PREFIX, ...), prints
 * the Redis and prefix it acts on, then the outcome. Each change is audited with actor `system`
 * and detail `via: cli`. Exit 0: done (or nothing to do); 1: refused (no such person or key,
 * Redis unreachable, a wrong configuration), the reason on stderr; 2: a wrong command line.
 */
const USAGE = `usage: npm run accounts -- <command>
       node dist/src/bin/accounts.js <command>

  grant-admin <phone|userId>   give a person the admin role (they must have signed in once);
                               the phone in any format (+55 11 91234-5678, 5511912345678)
  revoke-admin <phone|userId>  take the admin role away (their other roles stay)
  keys create --name <name> --scopes <scope,...>
                               make an API key and print its secret, this once; scopes:
                               ${ADMIN_SCOPES.join(', ')}
  keys list                    every API key (id, name, scopes, created, last used, revoked)
  keys revoke <id>             revoke a key at once (the id is the part after pak_)
  --help                       this text

Acts on the Redis and KEY_PREFIX of the environment, as the service does.
Exit 0: done; 1: refused, the reason on stderr; 2: a wrong command line.
`;

const CLI = { via: 'cli' } as const;

function usage(message: string): never {
  process.stderr.write(`accounts: ${message}\n${USAGE}`);
  process.exit(2);
}

/** A refusal the operator can act on (exit 1). */
class Refused extends Error {}

type Command =
  | { kind: 'grant-admin' | 'revoke-admin'; who: string }
  | { kind: 'keys-create'; name: string; scopes: AdminScope[] }
  | { kind: 'keys-list' }
  | { kind: 'keys-revoke'; id: string };

function parse(): Command {
  let parsed: { values: { help?: boolean; name?: string; scopes?: string }; positionals: string[] };
  // a user id may start with '-' (base64url): after grant-admin / revoke-admin the one argument is the person, never an option
  const args = process.argv.slice(2);
  const person = args.length === 2 && (args[0] === 'grant-admin' || args[0] === 'revoke-admin') && args[1] !== '--help';
  try {
    parsed = parseArgs({
      args: person ? [args[0]!, '--', args[1]!] : args,
      options: { help: { type: 'boolean' }, name: { type: 'string' }, scopes: { type: 'string' } },
      allowPositionals: true,
    });
  } catch (err) {
    usage(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const [first, second, third, ...rest] = positionals;
  const noFlags = (): void => {
    if (values.name !== undefined || values.scopes !== undefined)
      usage(`${first}${second && first === 'keys' ? ` ${second}` : ''} takes no --name or --scopes`);
  };
  if (first === undefined) usage('name a command');
  if (first === 'grant-admin' || first === 'revoke-admin') {
    noFlags();
    if (second === undefined) usage(`${first} needs a phone number or user id`);
    if (third !== undefined) usage(`unexpected argument "${third}"`);
    return { kind: first, who: second };
  }
  if (first !== 'keys') usage(`unknown command "${first}"`);
  if (second === undefined) usage('keys needs create, list or revoke');
  if (second === 'create') {
    if (third !== undefined) usage(`unexpected argument "${third}"`);
    // `npm run accounts keys create --name x` (no `--`): npm keeps the flags as npm_config_name / _scopes
    const npmTook = process.env.npm_config_name !== undefined || process.env.npm_config_scopes !== undefined;
    const hint = npmTook ? ' (npm kept the flags: put -- after npm run accounts)' : '';
    if (values.name === undefined) usage(`keys create needs --name${hint}`);
    if (values.scopes === undefined) usage(`keys create needs --scopes${hint}`);
    try {
      const checked = checkKeyInput({ name: values.name, scopes: values.scopes.split(',').map((s) => s.trim()) });
      return { kind: 'keys-create', ...checked };
    } catch (err) {
      usage(err instanceof Error ? err.message.replace(/^Invalid data: /, '--') : String(err));
    }
  }
  noFlags();
  if (second === 'list') {
    if (third !== undefined) usage(`unexpected argument "${third}"`);
    return { kind: 'keys-list' };
  }
  if (second === 'revoke') {
    if (third === undefined) usage('keys revoke needs a key id');
    if (rest.length > 0) usage(`unexpected argument "${rest[0]}"`);
    try {
      return { kind: 'keys-revoke', id: parseKeyId(third) };
    } catch (err) {
      usage(err instanceof Error ? err.message : String(err));
    }
  }
  usage(`unknown keys command "${second}"`);
}

/** The account a phone (any format) or a user id names: the phone through its identifier link. */
async function findAccount(redis: RedisClient, keys: Keys, who: string): Promise<string> {
  const looksLikePhone = /^\+?[\d\s\-().]+$/.test(who);
  if (looksLikePhone) {
    const phone = canonicalPhone(who);
    if (phone === null) throw new Refused(`"${who}" is no phone number (7 to 15 digits) and no user id`);
    const userId = await redis.get(keys.userByPhone(phone));
    if (userId === null || userId === '') throw new Refused(`no account has the phone ${phone}: the person must sign in once first`);
    return userId;
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(who)) throw new Refused(`"${who}" is no phone number and no user id`);
  if ((await redis.exists(keys.user(who))) === 0) throw new Refused(`no account has the id ${who}: the person must sign in once first`);
  return who;
}

const line = (k: ApiKeyView): string =>
  [
    k.id,
    JSON.stringify(k.name),
    k.scopes.join(','),
    `created ${k.createdAt} by ${k.createdBy}`,
    `last used ${k.lastUsedAt ?? 'never'}`,
    k.revokedAt === null ? 'live' : `revoked ${k.revokedAt}`,
  ].join('  ');

async function run(cmd: Command): Promise<void> {
  const config = loadConfig();
  process.stdout.write(`accounts: redis ${redisWhere(config)}, KEY_PREFIX ${config.keyPrefix}\n`);
  const keys = makeKeys(config.keyPrefix);
  const redis = connect(config.redis, 'command', `pinauth:accounts:${config.instanceName}`);
  try {
    await waitReady(redis, 10_000).catch(() => {
      throw new Refused(`Redis does not answer (${redisWhere(config)})`);
    });
    const scripts = new Scripts(redis);
    const audit = new AuditTrail(redis, scripts, keys, config.audit);
    const apiKeys = new ApiKeys(redis, keys, config.audit.days);
    const accountRoles = new AccountRoles(redis, scripts, keys, audit);
    switch (cmd.kind) {
      case 'grant-admin':
      case 'revoke-admin': {
        const add = cmd.kind === 'grant-admin';
        const userId = await findAccount(redis, keys, cmd.who);
        const had = parseRoles(await redis.hget(keys.user(userId), 'roles'), []).includes(ADMIN_ROLE_NAME);
        // the roles module's compare-and-set, audited as account.roles-changed (actor system, via cli)
        const roles = await accountRoles.change(userId, { op: add ? 'add' : 'remove', role: ADMIN_ROLE_NAME }, SYSTEM, { detail: CLI });
        const changed = had !== roles.includes(ADMIN_ROLE_NAME);
        const verb = add ? (changed ? 'is now an admin' : 'was an admin already') : changed ? 'is no admin any more' : 'was no admin';
        process.stdout.write(`user ${userId} ${verb} (roles: ${roles.join(', ')})\n`);
        return;
      }
      case 'keys-create': {
        const { key, secret } = await apiKeys.create({ name: cmd.name, scopes: cmd.scopes }, SYSTEM);
        await audit.record({ type: 'key.created', actor: SYSTEM, detail: { ...CLI, keyId: key.id, name: key.name, scopes: key.scopes.join(',') } });
        process.stdout.write(`API key ${key.id} created (name ${JSON.stringify(key.name)}, scopes ${key.scopes.join(',')})\n`);
        process.stdout.write('Its secret follows, shown this once (only its hash is kept): store it now.\n');
        process.stdout.write(`${secret}\n`);
        return;
      }
      case 'keys-list': {
        const all = await apiKeys.list();
        if (all.length === 0) process.stdout.write('no API keys\n');
        for (const k of all) process.stdout.write(`${line(k)}\n`);
        return;
      }
      case 'keys-revoke': {
        const { key, changed } = await apiKeys.revoke(cmd.id);
        if (changed) await audit.record({ type: 'key.revoked', actor: SYSTEM, detail: { ...CLI, keyId: key.id, name: key.name } });
        process.stdout.write(`API key ${key.id} (${JSON.stringify(key.name)}) ${changed ? 'revoked' : 'was revoked already'}\n`);
        return;
      }
    }
  } finally {
    redis.disconnect();
  }
}

const command = parse();
run(command).then(
  () => process.exit(0),
  (err: unknown) => {
    const known = err instanceof Refused || err instanceof AppError || err instanceof ConfigError;
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`accounts: ${err instanceof ConfigError ? 'configuration error: ' : ''}${known ? message : `failed: ${message}`}\n`);
    process.exit(1);
  },
);
