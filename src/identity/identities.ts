import { canonicalPhone } from './phone.js';

/**
 * An account is a person with linked identifiers (docs/identity.md). Each identifier the
 * gateways give is of one kind and linked to at most one account; a message carrying two links
 * them, a message carrying any one reaches the account. Stable kinds come first: they name the
 * person whatever their number (a Cloud API business-scoped user id, a WhatsApp LID); the phone
 * comes last, as numbers change hands. A username is shown, never looked up (it can be changed
 * and taken by someone else). Another channel's user id is one more stable kind here.
 */
export const STABLE_KINDS = ['bsuid', 'lid'] as const;
export type IdentityKind = (typeof STABLE_KINDS)[number] | 'phone';

export interface Identity {
  kind: IdentityKind;
  value: string;
}

/** What a message says about its sender (InboundMessage's fields). */
export interface SenderFacts {
  /** canonical E.164 (identity/phone.ts), null when withheld */
  phone: string | null;
  /** WhatsApp LID, digits before `@lid` */
  lid?: string;
  /** Cloud API business-scoped user id */
  userId?: string;
}

/** The sender's identifiers, stable kinds first, the phone last; empty when it carries none. */
export function identitiesOf(m: SenderFacts): Identity[] {
  const out: Identity[] = [];
  if (m.userId !== undefined) out.push({ kind: 'bsuid', value: m.userId });
  if (m.lid !== undefined) out.push({ kind: 'lid', value: m.lid });
  // looked up by its canonical form, whichever gateway adapter gave it
  const phone = m.phone !== null ? canonicalPhone(m.phone) : null;
  if (phone !== null) out.push({ kind: 'phone', value: phone });
  return out;
}

/**
 * The identity steps' state (lib/identity-steps.lua): identifiers as [kind, value], who a
 * confirmation question is asked of (the phone, else
 * the first identifier: a confirmation is answered from the chat it was asked in).
 */
export function identityState(m: SenderFacts & { username?: string }): { ids: string[][]; addr: string; phone: string; uname: string } {
  const ids = identitiesOf(m);
  const first = ids[0];
  const phone = ids.find((i) => i.kind === 'phone')?.value ?? null;
  return {
    ids: ids.map((i) => [i.kind, i.value]),
    addr: phone ?? (first ? `${first.kind}:${first.value}` : ''),
    phone: phone ?? '',
    uname: m.username ?? '',
  };
}

/** What finding a sender's account reads: the account an identifier is linked to, and an account's identifier of a stable kind. */
export interface IdentityLookup {
  linked(id: Identity): Promise<string | null>;
  stableId(userId: string, kind: IdentityKind): Promise<string | null>;
}

/**
 * The account a chat command acts on (STOP, and any other that is not a login): the account the
 * sender's identifiers reach under the rule a login applies (lib/identity-steps.lua,
 * docs/identity.md): a stable identifier's account; else the phone's account unless it is linked
 * to another identifier of a stable kind the message carries (a recycled number: the sender is
 * not that account's person); null when none. It links nothing.
 */
export async function accountOfSender(ids: readonly Identity[], read: IdentityLookup): Promise<string | null> {
  const stable = ids.filter((i) => i.kind !== 'phone');
  for (const id of stable) {
    const userId = await read.linked(id);
    if (userId) return userId;
  }
  const phone = ids.find((i) => i.kind === 'phone');
  const owner = phone ? await read.linked(phone) : null;
  if (!owner) return null;
  for (const id of stable) {
    const had = await read.stableId(owner, id.kind);
    if (had !== null && had !== id.value) return null;
  }
  return owner;
}
