import type { RouteDoc } from './route-doc.js';
import * as res from '../accounts/schemas.js';

const API_KEY_EXAMPLE = {
  id: '3f9c0a5e7b1d2468',
  name: 'SIEM export',
  scopes: ['events:read'],
  createdBy: 'admin:gXH0aZyOJJFU5t-wQwvazg',
  createdAt: '2025-12-01T21:00:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
};

/** The admin API's routes (src/http/admin-api/routes.ts), described as paths.ts describes the rest. */
export const ADMIN_ROUTES: RouteDoc[] = [
  {
    method: 'get',
    path: '/admin/api/v1/events',
    tag: 'accounts',
    summary: 'The audit trail, newest first, filtered by person, type and time, a page at a time',
    auth: 'adminApi',
    query: {
      userId: 'only events about this person',
      type: 'comma-separated event types',
      since: 'ISO 8601, inclusive',
      until: 'ISO 8601, inclusive',
      cursor: "the previous page's `next`",
      limit: '1..200, default 50',
    },
    example: {
      query: {
        userId: 'gXH0aZyOJJFU5t-wQwvazg',
        type: 'login.succeeded',
        since: '2025-12-01T00:00:00Z',
        until: '2025-12-02T00:00:00Z',
        cursor: '1764622800000-0',
        limit: '20',
      },
      ok: {
        success: true,
        events: [
          {
            id: '1764622800000-0',
            at: '2025-12-01T21:00:00.000Z',
            type: 'login.succeeded',
            userId: 'gXH0aZyOJJFU5t-wQwvazg',
            actor: 'system',
            requestId: null,
            ipGroup: null,
            client: 'evolution:main',
            detail: {},
          },
        ],
        next: null,
      },
    },
    ok: { description: 'one page of events', schema: res.auditPageSchema },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/admin/api/v1/me',
    tag: 'accounts',
    summary: 'Who is calling: an admin signed in, or an API key, and its scopes',
    auth: 'adminApi',
    example: {
      ok: { success: true, actor: { kind: 'key', keyId: '3f9c0a5e7b1d2468' }, scopes: ['events:read', 'users:read'] },
    },
    ok: { description: 'the caller', schema: res.adminMeSchema },
    errors: ['AUTHENTICATION_FAILED', 'FORBIDDEN', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/admin/api/v1/keys',
    tag: 'accounts',
    summary: 'Every API key, newest first (an admin signed in; never by an API key)',
    description: 'Never a secret: Redis keeps only its SHA-256.',
    auth: 'adminApi',
    example: { ok: { success: true, keys: [API_KEY_EXAMPLE] } },
    ok: { description: 'the keys', schema: res.apiKeyListSchema },
    errors: ['AUTHENTICATION_FAILED', 'FORBIDDEN', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'post',
    path: '/admin/api/v1/keys',
    tag: 'accounts',
    summary: 'Make an API key (an admin signed in; never by an API key); its secret is in this answer only',
    description: 'At most 100 live keys. Audited as `key.created` with the admin.',
    auth: 'adminApi',
    body: res.createApiKeySchema,
    example: {
      body: { name: 'SIEM export', scopes: ['events:read'] },
      ok: { success: true, key: API_KEY_EXAMPLE, secret: 'pak_3f9c0a5e7b1d2468_q8N2vYx0bLk4cR7tWm1zP5sHf9dJ3gA6eU0iO2yT4nM' },
    },
    ok: { description: 'the key and its secret, shown once', schema: res.apiKeyCreatedSchema },
    errors: ['AUTHENTICATION_FAILED', 'FORBIDDEN', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'delete',
    path: '/admin/api/v1/keys/:id',
    tag: 'accounts',
    summary: 'Revoke an API key at once (an admin signed in; never by an API key); again is no error',
    description: 'Audited as `key.revoked` with the admin. Unknown id: 404.',
    auth: 'adminApi',
    params: { id: 'the key id: 16 hexadecimal digits, the part after `pak_`' },
    example: { params: { id: '3f9c0a5e7b1d2468' }, ok: { success: true } },
    ok: { description: 'revoked', schema: res.adminOkSchema },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
];
