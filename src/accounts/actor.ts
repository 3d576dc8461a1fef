/**
 * Who did something the audit trail records (docs/accounts.md): an admin signed in to the
 * console (a person with the `admin` role), a machine's API key, the person themselves (their
 * own export or erase, by the API or in the chat), or the service on its own (a login, an
 * expiry). As text: `admin:<userId>`, `key:<keyId>`, `user:<userId>`, `system`.
 */
export type Actor = { kind: 'admin'; userId: string } | { kind: 'key'; keyId: string } | { kind: 'user'; userId: string } | { kind: 'system' };

export const SYSTEM: Actor = { kind: 'system' };

export function actorText(a: Actor): string {
  switch (a.kind) {
    case 'admin':
    case 'user':
      return `${a.kind}:${a.userId}`;
    case 'key':
      return `key:${a.keyId}`;
    case 'system':
      return 'system';
  }
}

/** What an API key may do; an admin signed in to the console may do all of it. */
export const ADMIN_SCOPES = ['users:read', 'users:write', 'events:read'] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];

/** The caller of an admin route, once admin-api/auth.ts has let it in. */
export interface AdminCaller {
  actor: Actor;
  scopes: ReadonlySet<AdminScope>;
}
