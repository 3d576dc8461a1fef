import type { Keys } from '../redis/keys.js';
import type { Scripts } from '../redis/scripts.js';
import type { InboundJob } from '../queues/jobs.js';
import { emojiFromChat } from '../messaging/pin-text.js';
import { emojiHash } from '../registrations/emoji.js';
import { newShortId, newUserId } from './ids.js';
import type { LoginResult } from './login-result.js';
import type { TokenService } from './tokens.js';

/**
 * A chat message becomes a login: match its emoji string to a pending registration, find or
 * create the user by phone, open a session, issue tokens, store the result for check-login.
 * Two Redis round trips (claim, complete) around token signing; both steps are atomic scripts.
 */
export type LoginOutcome =
  | { outcome: 'logged-in'; pinId: string; pinHash: string; result: LoginResult; phone: string }
  | { outcome: 'already-done'; pinId: string }
  | { outcome: 'duplicate' }
  | { outcome: 'no-phone' }
  | { outcome: 'not-a-code' }
  | { outcome: 'no-match'; phone: string };

const DEDUP_TTL_SECONDS = 24 * 3600;

/** `pushName` splits at the first space into name and surname. */
export function splitName(displayName: string | null): { name: string; surname: string } {
  const trimmed = (displayName ?? '').trim().slice(0, 200);
  const space = trimmed.indexOf(' ');
  if (space === -1) return { name: trimmed, surname: '' };
  return { name: trimmed.slice(0, space), surname: trimmed.slice(space + 1).trim() };
}

export class LoginProcessor {
  constructor(
    private readonly scripts: Scripts,
    private readonly keys: Keys,
    private readonly tokens: TokenService,
    private readonly graceSeconds: number,
  ) {}

  async process(job: InboundJob): Promise<LoginOutcome> {
    const { message, nonce } = job;
    if (message.phone === null) return { outcome: 'no-phone' };
    const emoji = message.text === null ? null : emojiFromChat(message.text);
    if (emoji === null) return { outcome: 'not-a-code' };
    const { name, surname } = splitName(message.displayName);

    const claim = await this.scripts.strings('claim-login', [
      this.keys.prefix,
      message.id,
      nonce,
      emojiHash(emoji),
      message.phone,
      newUserId(),
      name,
      surname,
      newShortId(),
      newShortId(),
      this.tokens.refreshTtl * 1000,
      this.graceSeconds * 1000,
      DEDUP_TTL_SECONDS,
    ]);
    if (claim[0] === 'duplicate') return { outcome: 'duplicate' };
    if (claim[0] === 'done') return { outcome: 'already-done', pinId: '' };
    if (claim[0] === 'completed') {
      // a retry of this job after its login was stored: announce it again (at least once)
      const [, pinId = '', pinHash = '', resultJson = ''] = claim;
      const result = JSON.parse(resultJson) as LoginResult;
      return { outcome: 'logged-in', pinId, pinHash, result, phone: result.user.phone };
    }
    if (claim[0] !== 'claimed') return { outcome: 'no-match', phone: message.phone };
    const [, pinId = '', pinHash = '', sid = '', refreshJti = '', userId = '', userName = '', , phone = '', rolesJson = '[]'] = claim;

    const roles = parseRoles(rolesJson);
    const pair = this.tokens.issuePair(userId, sid, roles, refreshJti);
    const result: LoginResult = {
      token: pair.token,
      refreshToken: pair.refreshToken,
      user: { id: userId, name: userName, phone, roles },
    };
    const done = await this.scripts.number('complete-login', [
      this.keys.prefix,
      pinHash,
      message.id,
      JSON.stringify(result),
      this.graceSeconds * 1000,
    ]);
    if (done !== 1) return { outcome: 'already-done', pinId };
    return { outcome: 'logged-in', pinId, pinHash, result, phone };
  }
}

function parseRoles(raw: string): string[] {
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((r): r is string => typeof r === 'string') : ['user'];
  } catch {
    return ['user'];
  }
}
