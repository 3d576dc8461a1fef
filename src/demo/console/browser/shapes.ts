/** The admin API's answers as the console reads them (docs/accounts.md; src/accounts/schemas.ts is the reference). */
export interface UserSummary {
  id: string;
  name: string;
  surname: string;
  phone: string | null;
  roles: string[];
  blocked: boolean;
  createdAt: string;
  lastLoginAt: string | null;
}

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

export interface AuditRecord {
  id: string;
  at: string;
  type: string;
  userId: string | null;
  actor: string;
  requestId: string | null;
  ipGroup: string | null;
  client: string | null;
  detail: Record<string, string | number | boolean>;
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
