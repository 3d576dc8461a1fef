import { ADMIN_SCOPES } from './actor.js';
import { bodyValidator } from '../validation/validate.js';
import { AUDIT_TYPES } from './audit.js';
import { MAX_BLOCK_REASON } from './block.js';

/** JSON Schemas of the admin API's bodies and answers (src/http/admin-api/), as validation/ holds the rest's. */

const nullableStr = { type: ['string', 'null'] } as const;

export const auditRecordSchema = {
  type: 'object',
  description: 'One event of the audit trail',
  properties: {
    id: { type: 'string', description: 'its stream id; also a cursor' },
    at: { type: 'string', description: 'ISO 8601' },
    type: { type: 'string', enum: [...AUDIT_TYPES] },
    userId: nullableStr,
    actor: {
      type: 'string',
      description: '`admin:<userId>`, `key:<keyId>`, `user:<userId>` or `system`; `erased` for what a person since erased did to someone else',
    },
    requestId: nullableStr,
    ipGroup: nullableStr,
    client: nullableStr,
    detail: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
  },
  required: ['id', 'at', 'type', 'userId', 'actor', 'requestId', 'ipGroup', 'client', 'detail'],
} as const;

export const auditPageSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    events: { type: 'array', items: auditRecordSchema },
    next: { ...nullableStr, description: 'the cursor of the next (older) page; null at the end' },
  },
  required: ['success', 'events', 'next'],
} as const;

const scopeSchema = { type: 'string', enum: [...ADMIN_SCOPES] } as const;

/** GET /admin/api/v1/me: the caller the door let in. */
export const adminMeSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    actor: {
      oneOf: [
        {
          type: 'object',
          description: 'an admin signed in through the chat',
          properties: { kind: { const: 'admin' }, userId: { type: 'string' } },
          required: ['kind', 'userId'],
        },
        { type: 'object', description: 'an API key', properties: { kind: { const: 'key' }, keyId: { type: 'string' } }, required: ['kind', 'keyId'] },
      ],
    },
    scopes: { type: 'array', items: scopeSchema, description: 'what the caller may do (an admin: all of them)' },
  },
  required: ['success', 'actor', 'scopes'],
} as const;

export const apiKeyViewSchema = {
  type: 'object',
  description: 'An API key as listed: never its secret',
  properties: {
    id: { type: 'string', pattern: '^[0-9a-f]{16}$', description: 'the part after `pak_`; names the key in the audit trail (`key:<id>`)' },
    name: { type: 'string' },
    scopes: { type: 'array', items: scopeSchema },
    createdBy: { type: 'string', description: '`admin:<userId>`, or `system` (the command line)' },
    createdAt: { type: 'string', description: 'ISO 8601' },
    lastUsedAt: { ...nullableStr, description: 'ISO 8601, to the minute; null when never used' },
    revokedAt: { ...nullableStr, description: 'ISO 8601; null while the key works' },
  },
  required: ['id', 'name', 'scopes', 'createdBy', 'createdAt', 'lastUsedAt', 'revokedAt'],
} as const;

export const apiKeyListSchema = {
  type: 'object',
  properties: { success: { const: true }, keys: { type: 'array', items: apiKeyViewSchema, description: 'newest first; revoked ones too, for a while' } },
  required: ['success', 'keys'],
} as const;

export const createApiKeySchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 64, description: 'what the key is for' },
    scopes: { type: 'array', items: scopeSchema, minItems: 1, uniqueItems: true },
  },
  required: ['name', 'scopes'],
  additionalProperties: false,
} as const;

export const apiKeyCreatedSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    key: apiKeyViewSchema,
    secret: {
      type: 'string',
      pattern: '^pak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$',
      description: 'the whole key, shown this once: `Authorization: Bearer <secret>`',
    },
  },
  required: ['success', 'key', 'secret'],
} as const;

export const adminOkSchema = {
  type: 'object',
  properties: { success: { const: true } },
  required: ['success'],
} as const;

// --- people: the directory, one person, their sessions and roles (src/http/admin-api/users.ts) ---

const isoTime = { type: 'string', format: 'date-time' } as const;
const roleName = { type: 'string', pattern: '^[a-z][a-z0-9_.-]{0,31}$', description: 'a role name (docs/accounts.md, "Roles")' } as const;

export const userSummarySchema = {
  type: 'object',
  description: 'A person as a list shows them',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    surname: { type: 'string' },
    phone: { ...nullableStr, description: 'canonical E.164; null when the account has none (known by LID or BSUID alone)' },
    roles: { type: 'array', items: { type: 'string' } },
    blocked: { type: 'boolean' },
    createdAt: isoTime,
    lastLoginAt: { type: ['string', 'null'], description: 'the last sign-in (ISO 8601); null when none is known' },
  },
  required: ['id', 'name', 'surname', 'phone', 'roles', 'blocked', 'createdAt', 'lastLoginAt'],
} as const;

export const adminSessionSchema = {
  type: 'object',
  description: "One of the person's sessions: an app session of this service's tokens, or an OpenID login of an app",
  properties: {
    id: { type: 'string', description: "for DELETE /admin/api/v1/users/{id}/sessions/{sid}; an OpenID login's starts with `oidc.`" },
    kind: { type: 'string', enum: ['app', 'oidc'] },
    client: {
      type: ['object', 'null'],
      description: 'the app an OpenID login is for; null for an app session',
      properties: { id: { type: 'string' }, name: { type: 'string' } },
      required: ['id', 'name'],
    },
    createdAt: isoTime,
    lastUsedAt: { ...isoTime, description: 'the last sign-in or token refresh (an OpenID login: its last code or token)' },
    expiresAt: isoTime,
    device: { type: 'string' },
    ip: { type: 'string', description: 'the signing-in address, host part masked' },
  },
  required: ['id', 'kind', 'client', 'createdAt', 'lastUsedAt', 'expiresAt', 'device', 'ip'],
} as const;

export const userListSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    users: { type: 'array', items: userSummarySchema },
    next: { ...nullableStr, description: 'the cursor of the next page; null at the end' },
  },
  required: ['success', 'users', 'next'],
} as const;

export const userDetailSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    user: {
      type: 'object',
      description: 'A person in full: the summary, their identifiers, block, sessions and the latest events about them',
      properties: {
        ...userSummarySchema.properties,
        identifiers: {
          type: 'array',
          description: 'the linked identifiers (`phone`, `lid`, `bsuid`) and the WhatsApp `username` (shown, never looked up)',
          items: { type: 'object', properties: { kind: { type: 'string' }, value: { type: 'string' } }, required: ['kind', 'value'] },
        },
        blockedAt: nullableStr,
        blockedBy: { ...nullableStr, description: 'the actor who blocked the person' },
        blockReason: nullableStr,
        sessions: { type: 'array', items: adminSessionSchema },
        events: { type: 'array', items: auditRecordSchema, description: 'the latest 20, newest first' },
      },
      required: [...userSummarySchema.required, 'identifiers', 'blockedAt', 'blockedBy', 'blockReason', 'sessions', 'events'],
    },
  },
  required: ['success', 'user'],
} as const;

export const adminSessionListSchema = {
  type: 'object',
  properties: { success: { const: true }, sessions: { type: 'array', items: adminSessionSchema } },
  required: ['success', 'sessions'],
} as const;

export const sessionEndedSchema = {
  type: 'object',
  properties: { success: { const: true }, closed: { type: 'integer', minimum: 0, description: 'sessions closed, OpenID logins included' } },
  required: ['success', 'closed'],
} as const;

export const rolesAnswerSchema = {
  type: 'object',
  properties: { success: { const: true }, roles: { type: 'array', items: { type: 'string' }, description: 'the roles after the change, `user` first' } },
  required: ['success', 'roles'],
} as const;

/** PUT /admin/api/v1/users/:id/roles */
export const setRolesBodySchema = {
  type: 'object',
  properties: { roles: { type: 'array', items: roleName, maxItems: 16, description: '`user` is added when missing' } },
  required: ['roles'],
  additionalProperties: false,
} as const;

/** POST /admin/api/v1/users/:id/roles */
export const addRoleBodySchema = {
  type: 'object',
  properties: { role: roleName },
  required: ['role'],
  additionalProperties: false,
} as const;

/** POST /admin/api/v1/users/:id/block */
export const blockBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    reason: {
      type: 'string',
      maxLength: MAX_BLOCK_REASON,
      description: 'why, for the operators (kept on the account and in the audit event; never shown to the person)',
    },
  },
} as const;
export interface BlockBody {
  reason?: string;
}
export const validateBlockBody = bodyValidator<BlockBody>(blockBodySchema);

export const blockAnswerSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    blockedAt: { type: 'string', description: 'ISO 8601: when the account was blocked (the first block, when it was blocked already)' },
    sessionsEnded: { type: 'integer', minimum: 0, description: 'app sessions and OpenID logins ended by this call' },
  },
  required: ['success', 'blockedAt', 'sessionsEnded'],
} as const;

/** An erase's receipt (accounts/erase.ts): no personal data. */
export const erasureReceiptSchema = {
  type: 'object',
  description: "An erase's receipt, kept for ERASURE_RECEIPT_DAYS under its id; it holds no personal data",
  properties: {
    id: { type: 'string', pattern: '^er_[A-Za-z0-9_-]+$', description: 'the receipt id (`er_` + 128 random bits): note it against the request' },
    erasedAt: { type: 'string', description: 'ISO 8601' },
    actor: { type: 'string', description: '`admin:<userId>`, `key:<keyId>`, `user` (the person themselves, no id) or `system`' },
    removed: {
      type: 'object',
      description:
        'keys (or records) removed, by holding: sessions, openid, identifiers, registrations, confirmations, messages, senders, deliveries, limits, jobs, ' +
        'directory, keys, blocks, events, account',
      additionalProperties: { type: 'integer', minimum: 0 },
    },
  },
  required: ['id', 'erasedAt', 'actor', 'removed'],
} as const;

export const erasureResponseSchema = {
  type: 'object',
  properties: { success: { const: true }, receipt: erasureReceiptSchema },
  required: ['success', 'receipt'],
} as const;

const list = (description: string) => ({ type: 'array', description, items: { type: 'object' } }) as const;

/** Everything held about a person (accounts/export.ts): each holding's part under its name. */
export const personExportSchema = {
  type: 'object',
  description: 'Everything held about a person, one part per kind of data; no secret (PIN hash, token, result) is in it',
  properties: {
    format: { const: 'pin-auth/export/1' },
    exportedAt: { type: 'string', description: 'ISO 8601' },
    userId: { type: 'string' },
    holdings: {
      type: 'object',
      properties: {
        account: {
          type: 'object',
          description: 'the user record: id, name, surname, phone, roles, createdAt, the identifiers it names (`id:<kind>`), username',
          properties: { id: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } } },
          required: ['id', 'roles'],
        },
        identifiers: list('every identifier the account is known by: `{kind, value, linked}`'),
        sessions: list("the app's sessions: `{kind: 'app', id, createdAt, lastUsedAt, expiresAt, device, ip}`"),
        openid: list('OpenID logins of apps signing the person in through /oidc: `{kind: "oidc", id, client, …}`'),
        registrations: list('sign-ins in flight or waiting to be collected: `{pinId, state, expiresAt, verifiedAt, device, ip}`'),
        confirmations: list('chat questions open for the person: `{number, askedAt, expiresAt, device, ip}`'),
        messages: list('chat messages of the last day that signed the person in: `{messageId}`'),
        senders: list('the sender of a recent message kept for an edit: `{phone, lid, displayName, …}`'),
        deliveries: list('messages sent with /send-message: `{messageId, status, channel, kind, queuedAt, …}`'),
        limits: { type: 'array', items: { type: 'string' }, description: 'rate-limit budgets spent under the phone or id (names)' },
        jobs: list('jobs in the queues that carry the person (their chat messages, replies to them): `{queue, id, state, createdAt, data}`'),
        keys: list('API keys the person made as an admin: `{id, name, createdAt}` (never a secret)'),
        events: list('audit events about the person, newest first'),
      },
      required: ['account', 'identifiers', 'sessions', 'openid', 'events'],
      additionalProperties: true,
    },
  },
  required: ['format', 'exportedAt', 'userId', 'holdings'],
} as const;

export const personExportResponseSchema = {
  type: 'object',
  properties: { success: { const: true }, export: personExportSchema },
  required: ['success', 'export'],
} as const;
