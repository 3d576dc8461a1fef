import type { AuditRecord } from '../../../accounts/audit.js';
import type { UserSummary } from '../../../accounts/directory.js';

/** The admin API's answers as the console reads them (docs/accounts.md; src/accounts/schemas.ts is the reference): the server's own types where it has them. */
export type { AuditRecord, UserSummary };

export interface AdminSession {
  id: string;
  kind: 'app' | 'oidc';
  client: { id: string; name?: string } | string | null;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  device: string;
  ip: string;
}

export interface UserDetail extends UserSummary {
  identifiers: { kind: string; value: string }[];
  blockedAt: string | null;
  blockedBy: string | null;
  blockReason: string | null;
  sessions: AdminSession[];
  events: AuditRecord[];
}

export interface ApiKeyView {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt?: string | null;
  /** listed a while after it was revoked */
  revokedAt?: string | null;
}

export interface Me {
  actor: string | { kind: string; userId?: string; keyId?: string };
  scopes: string[];
}
