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
