import { randomInt } from 'node:crypto';
import type { Sessions } from '../auth/sessions.js';
import { AppError } from '../errors.js';
import type { CommandIntent } from '../chat/intent.js';
import type { ChatDevice } from '../chat/texts.js';
import { accountOfSender, type Identity, type IdentityLookup } from '../identity/identities.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Actor } from './actor.js';

/**
 * The person's own rights in the chat (docs/accounts.md, "In the chat"): HELP names the
 * commands, SESSIONS lists where the person is signed in (app sessions and OpenID logins),
 * DELETE asks for a numbered confirmation and "DELETE <number>" within the window erases the
 * account. Each acts on the sender's own account only, the one the recycled-number rule reaches
 * (identity/identities.ts, accountOfSender, as STOP does): never the previous owner's of a
 * number that changed hands.
 *
 * The pending confirmation is one key per account (`eraseAsk`): the number and the message that
 * asked for it, for ERASE_CONFIRM_MINUTES. A new DELETE replaces it with a new number; a retry
 * of the same message gets the same number. A confirmation first notes which account the
 * confirming message erases (`eraseByMessage`), so a retry of a job that died mid-erase (when
 * the sender's identifier links may already be gone) finishes the same erase; both keys go once
 * the erase is done.
 */

/** How long a DELETE's number stays good. */
export const ERASE_CONFIRM_MINUTES = 10;

/** How long the confirming message's note outlives a job that died mid-erase (the inbound retries' reach). */
const ERASING_SECONDS = 24 * 3600;

/** The person's OpenID logins as SESSIONS lists them (oidc/logins.ts's OidcLogins, a layer above, implements it). */
export interface OpenIdLoginList {
  list(userId: string): Promise<ReadonlyArray<{ device: string; ip: string; lastUsedAt: string; client: { name: string } }>>;
}

/** Who else the erase tells (the audit trail's fields of the event). */
export interface EraseMeta {
  requestId?: string;
  ipGroup?: string;
  /** the chat channel the DELETE came on */
  client?: string;
}

/** What erases an account and everything kept about the person (accounts/erase.ts's Eraser); idempotent. */
export interface AccountEraser {
  erase(userId: string, actor: Actor, meta: EraseMeta): Promise<unknown>;
}

export type CommandOutcome =
  | { outcome: 'help' }
  /** SESSIONS or DELETE from a sender whose identifiers reach no account of theirs */
  | { outcome: 'no-account' }
  | { outcome: 'sessions'; userId: string; devices: ChatDevice[] }
  | { outcome: 'erase-asked'; userId: string; number: string; minutes: number }
  /**
   * DELETE that erases nothing: "DELETE <n>" with no deletion of this account waiting for that
   * number (none asked, expired, or another number); or (`blocked`) any DELETE of a blocked
   * account, which only an operator erases: its erase would end the block, the next code making
   * a fresh account
   */
  | { outcome: 'erase-refused'; userId: string; blocked?: true }
  | { outcome: 'erased'; userId: string };

export type CommandResult = CommandOutcome['outcome'];

export class ChatRights {
  private readonly lookup: IdentityLookup;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly sessions: Pick<Sessions, 'list'>,
    private readonly openId: OpenIdLoginList,
    private readonly eraser: AccountEraser,
  ) {
    this.lookup = {
      linked: ({ kind, value }) => this.redis.get(this.keys.identity(kind, value)),
      stableId: (uid, kind) => this.redis.hget(this.keys.user(uid), `id:${kind}`),
    };
  }

  /** Runs one command of the sender (`ids`: identitiesOf the message); `messageId`: the chat message's. */
  async run(ids: readonly Identity[], intent: CommandIntent, messageId: string, meta: EraseMeta = {}): Promise<CommandOutcome> {
    if (intent.kind === 'help') return { outcome: 'help' };
    if (intent.kind === 'delete' && intent.confirm !== undefined) {
      // a retry of a confirmation that died mid-erase: the same account, whatever its links are now
      const erasing = await this.redis.get(this.keys.eraseByMessage(messageId));
      if (erasing !== null) return this.erase(erasing, messageId, meta);
    }
    const userId = await accountOfSender(ids, this.lookup);
    if (userId === null) return { outcome: 'no-account' };
    if (intent.kind === 'sessions') return { outcome: 'sessions', userId, devices: await this.devices(userId) };
    if ((await this.redis.hexists(this.keys.user(userId), 'blockedAt')) === 1) return { outcome: 'erase-refused', userId, blocked: true };
    if (intent.confirm === undefined) return this.ask(userId, messageId);
    return this.confirm(userId, intent.confirm, messageId, meta);
  }

  /** Where the account is signed in: its app sessions and its OpenID logins. */
  async devices(userId: string): Promise<ChatDevice[]> {
    const [app, oidc] = await Promise.all([this.sessions.list(userId, ''), this.openId.list(userId)]);
    return [
      ...app.map((s) => ({ device: s.device, ip: s.ip, lastUsedAt: new Date(s.lastUsedAt) })),
      ...oidc.map((l) => ({ device: l.device, ip: l.ip, lastUsedAt: new Date(l.lastUsedAt), client: l.client.name })),
    ];
  }

  /** DELETE: a fresh number for the account (the same one to a retry of the same message). */
  private async ask(userId: string, messageId: string): Promise<CommandOutcome> {
    const key = this.keys.eraseAsk(userId);
    const held = parseAsk(await this.redis.get(key));
    const number = held?.messageId === messageId ? held.number : String(randomInt(10, 100));
    if (held?.messageId !== messageId) await this.redis.set(key, `${number}|${messageId}`, 'EX', ERASE_CONFIRM_MINUTES * 60);
    return { outcome: 'erase-asked', userId, number, minutes: ERASE_CONFIRM_MINUTES };
  }

  /** "DELETE <n>": erases the account when n is its pending number; anything else leaves all as it was. */
  private async confirm(userId: string, number: string, messageId: string, meta: EraseMeta): Promise<CommandOutcome> {
    const held = parseAsk(await this.redis.get(this.keys.eraseAsk(userId)));
    if (held === null || held.number !== number) return { outcome: 'erase-refused', userId };
    await this.redis.set(this.keys.eraseByMessage(messageId), userId, 'EX', ERASING_SECONDS);
    return this.erase(userId, messageId, meta);
  }

  private async erase(userId: string, messageId: string, meta: EraseMeta): Promise<CommandOutcome> {
    try {
      await this.eraser.erase(userId, { kind: 'user', userId }, meta);
    } catch (err) {
      // erased already (a retry after the erase finished, or a second DELETE <n> at the same moment): what was asked is done
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) throw err;
    }
    // one key each (two slots on a cluster); the note last, so a retry still finds what it erased
    await this.redis.unlink(this.keys.eraseAsk(userId));
    await this.redis.unlink(this.keys.eraseByMessage(messageId));
    return { outcome: 'erased', userId };
  }
}

function parseAsk(raw: string | null): { number: string; messageId: string } | null {
  if (raw === null) return null;
  const bar = raw.indexOf('|');
  return bar < 0 ? null : { number: raw.slice(0, bar), messageId: raw.slice(bar + 1) };
}
