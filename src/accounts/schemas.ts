import { ADMIN_SCOPES } from './actor.js';
import { AUDIT_TYPES } from './audit.js';

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
    actor: { type: 'string', description: '`admin:<userId>`, `key:<keyId>`, `user:<userId>` or `system`' },
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
