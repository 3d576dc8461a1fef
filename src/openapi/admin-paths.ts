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

const USER_ID = 'gXH0aZyOJJFU5t-wQwvazg';

/** An erase's receipt, as the admin and the person's routes answer it. */
export const RECEIPT_EXAMPLE = {
  id: 'er_Q2hhbmdlIG1lIHBsZWFzZQ',
  erasedAt: '2026-12-02T01:00:00.000Z',
  actor: 'admin:Zm9vYmFyYmF6cXV4cXV1eA',
  removed: {
    sessions: 2,
    openid: 4,
    identifiers: 3,
    registrations: 1,
    confirmations: 0,
    messages: 2,
    senders: 0,
    deliveries: 1,
    limits: 2,
    jobs: 5,
    directory: 1,
    keys: 0,
    blocks: 0,
    events: 12,
    account: 4,
  },
};

/** A person's export, as the admin and the person's routes answer it. */
export const EXPORT_EXAMPLE = {
  format: 'pin-auth/export/1',
  exportedAt: '2026-12-02T01:00:00.000Z',
  userId: USER_ID,
  holdings: {
    account: {
      id: USER_ID,
      name: 'Ana',
      surname: 'Silva',
      phone: '+5511999998888',
      roles: ['user'],
      createdAt: '2026-11-01T12:00:00.000Z',
      'id:lid': '123456789012345',
    },
    identifiers: [
      { kind: 'lid', value: '123456789012345', linked: true },
      { kind: 'phone', value: '+5511999998888', linked: true },
    ],
    sessions: [
      {
        kind: 'app',
        id: 'q1w2e3r4t5y6u7i8o9p0aa',
        createdAt: '2026-12-01T21:00:00.000Z',
        lastUsedAt: '2026-12-01T21:10:00.000Z',
        expiresAt: '2026-12-31T21:10:00.000Z',
        device: 'Chrome on Windows',
        ip: '203.0.113.x',
      },
    ],
    openid: [
      {
        kind: 'oidc',
        id: 'oidc.Z3JhbnQtaWQtZXhhbXBsZQ',
        client: { id: 'shop', name: 'The Shop' },
        createdAt: '2026-12-01T20:00:00.000Z',
        lastUsedAt: '2026-12-01T20:30:00.000Z',
        expiresAt: '2026-12-15T20:00:00.000Z',
        device: 'Safari on iPhone',
        ip: '198.51.100.x',
        current: false,
      },
    ],
    registrations: [],
    confirmations: [],
    messages: [{ messageId: '3EB0C431C26A1916E0A7' }],
    senders: [],
    deliveries: [],
    limits: [],
    jobs: [],
    keys: [],
    events: [],
  },
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
    path: '/admin/api/v1/events/stream',
    tag: 'accounts',
    summary: 'The audit trail live, as Server-Sent Events a SIEM can pull',
    description: [
      'A `text/event-stream` that stays open: each event recorded from now on (or after the `Last-Event-ID` header, else `after`) as',
      '`id: <stream id>`, `event: audit`, `data: <the AuditRecord as JSON, the shape of GET /admin/api/v1/events>`.',
      'A comment line (`: heartbeat`) when nothing else was written for AUDIT_STREAM_HEARTBEAT_SECONDS, and the credential is checked',
      'again then: a revoked key, a role taken away or an access token past its life ends the stream; reconnect with a fresh one and',
      'the last `id` seen as `Last-Event-ID` (an EventSource does it by itself, `retry: 5000`). A stream ends when its client goes or',
      'the node shuts down. At most AUDIT_STREAMS_PER_NODE streams per web node: one more is 429 with Retry-After.',
    ].join(' '),
    auth: 'adminApi',
    query: {
      userId: 'only events naming this person (about them or done by them)',
      type: 'comma-separated event types',
      after: 'a stream id: the events after it first (the `Last-Event-ID` header wins when both are given); none: from now on',
    },
    example: { query: { userId: 'gXH0aZyOJJFU5t-wQwvazg', type: 'login.succeeded,login.denied', after: '1764622800000-0' } },
    ok: { description: 'the event stream (never ends by itself)', contentType: 'text/event-stream' },
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
  {
    method: 'post',
    path: '/admin/api/v1/users/:id/block',
    tag: 'accounts',
    summary: 'Block a person: every app session and OpenID login ends now, and no sign-in by any path goes through until unblocked',
    description:
      'The sender of a code or a YES whose account is blocked signs no one in: ' +
      'the waiting client hears what a NO gives it (check-login 403 `LOGIN_DENIED`, socket `pin-error {error: LOGIN_DENIED}`), ' +
      "the person is told in the chat (reply kind `blocked`). Blocking a blocked account keeps the first block's time and reason. " +
      'An admin cannot block their own account.',
    auth: 'adminApi',
    params: { id: 'the user id' },
    body: res.blockBodySchema,
    ok: { description: 'blocked', schema: res.blockAnswerSchema },
    example: {
      params: { id: 'gXH0aZyOJJFU5t-wQwvazg' },
      body: { reason: 'reported for fraud (ticket 4711)' },
      ok: { success: true, blockedAt: '2025-12-01T21:00:00.000Z', sessionsEnded: 2 },
    },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'delete',
    path: '/admin/api/v1/users/:id/block',
    tag: 'accounts',
    summary: 'Unblock a person: their next sign-in goes through (nothing that was ended comes back)',
    auth: 'adminApi',
    params: { id: 'the user id' },
    ok: { description: 'not blocked (also when it was not)', schema: res.adminOkSchema },
    example: { params: { id: 'gXH0aZyOJJFU5t-wQwvazg' }, ok: { success: true } },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
];

const PERSON = 'gXH0aZyOJJFU5t-wQwvazg';
const summaryExample = {
  id: PERSON,
  name: 'Ana',
  surname: 'Silva',
  phone: '+5511987654321',
  roles: ['user'],
  blocked: false,
  createdAt: '2025-11-02T14:03:11.000Z',
  lastLoginAt: '2025-12-01T21:00:00.000Z',
};
const sessionExample = {
  id: 'Xq3vT0cYb2l9dQm8aN1e4w',
  kind: 'app',
  client: null,
  createdAt: '2025-12-01T21:00:00.000Z',
  lastUsedAt: '2025-12-01T21:14:00.000Z',
  expiresAt: '2025-12-31T21:14:00.000Z',
  device: 'Firefox on Android',
  ip: '203.0.113.x',
};
const oidcSessionExample = {
  id: 'oidc.Wm2kP8sJx0QyH5cV7nLr3a',
  kind: 'oidc',
  client: { id: 'shop', name: 'The Shop' },
  createdAt: '2025-11-20T09:30:00.000Z',
  lastUsedAt: '2025-12-01T08:00:00.000Z',
  expiresAt: '2025-12-20T09:30:00.000Z',
  device: 'Chrome on Windows',
  ip: '198.51.100.x',
};
const userParam = { id: "the person's user id" };
const peopleErrors = ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'] as const;
const rolesAnswer = { description: 'the roles after the change', schema: res.rolesAnswerSchema };

/** The people routes (src/http/admin-api/users.ts). */
const PEOPLE_ROUTES: RouteDoc[] = [
  {
    method: 'get',
    path: '/admin/api/v1/users',
    tag: 'accounts',
    summary: 'Find people: by user id, phone (any format), LID, BSUID or name prefix; everyone newest first without `q`',
    description:
      'An identifier (an exact user id, a phone in any format, canonicalised; a LID, digits with or without `@lid`; ' +
      'a BSUID) answers the people it is linked to, on one page. ' +
      'Anything else is a case- and accent-insensitive prefix of the name or the surname, in name order. Without `q`: everyone, newest first. ' +
      'Pages are `limit` long; `next` is the cursor of the next.',
    auth: 'adminApi',
    query: { q: 'an identifier or the start of a name; at most 200 characters', cursor: "the previous page's `next`", limit: '1..100, default 20' },
    example: {
      query: { q: 'ana', cursor: 'eyJrIjoibiIsIm0iOiJhbmEgc2lsdmFcdTAwMDBnWEgwYVp5T0pKRlU1dC13UXd2YXpnIn0', limit: '20' },
      ok: { success: true, users: [summaryExample], next: null },
    },
    ok: { description: 'one page of people', schema: res.userListSchema },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/admin/api/v1/users/:id',
    tag: 'accounts',
    summary: 'One person: identifiers, roles, block, created, last sign-in, app and OpenID sessions, the latest 20 events',
    auth: 'adminApi',
    params: userParam,
    example: {
      params: { id: PERSON },
      ok: {
        success: true,
        user: {
          ...summaryExample,
          identifiers: [
            { kind: 'phone', value: '+5511987654321' },
            { kind: 'lid', value: '123456789012345' },
          ],
          blockedAt: null,
          blockedBy: null,
          blockReason: null,
          sessions: [oidcSessionExample, sessionExample],
          events: [
            {
              id: '1764622800000-0',
              at: '2025-12-01T21:00:00.000Z',
              type: 'login.succeeded',
              userId: PERSON,
              actor: 'system',
              requestId: null,
              ipGroup: null,
              client: 'evolution:main',
              detail: {},
            },
          ],
        },
      },
    },
    ok: { description: 'the person', schema: res.userDetailSchema },
    errors: [...peopleErrors],
  },
  {
    method: 'get',
    path: '/admin/api/v1/users/:id/sessions',
    tag: 'accounts',
    summary: "The person's app sessions and OpenID logins, oldest first",
    auth: 'adminApi',
    params: userParam,
    example: { params: { id: PERSON }, ok: { success: true, sessions: [oidcSessionExample, sessionExample] } },
    ok: { description: 'their sessions', schema: res.adminSessionListSchema },
    errors: [...peopleErrors],
  },
  {
    method: 'delete',
    path: '/admin/api/v1/users/:id/sessions/:sid',
    tag: 'accounts',
    summary: "Ends one of the person's sessions (an OpenID login by its `oidc.` id); audited as `session.ended`",
    auth: 'adminApi',
    params: { ...userParam, sid: 'a session id of GET /admin/api/v1/users/{id}/sessions' },
    example: { params: { id: PERSON, sid: sessionExample.id }, ok: { success: true, closed: 1 } },
    ok: { description: 'the session is closed: its tokens are refused from now on', schema: res.sessionEndedSchema },
    errors: [...peopleErrors, 'SESSION_NOT_FOUND'],
  },
  {
    method: 'delete',
    path: '/admin/api/v1/users/:id/sessions',
    tag: 'accounts',
    summary: 'Signs the person out everywhere: every app session and OpenID login; audited as `session.ended`',
    auth: 'adminApi',
    params: userParam,
    example: { params: { id: PERSON }, ok: { success: true, closed: 2 } },
    ok: { description: 'how many were closed', schema: res.sessionEndedSchema },
    errors: [...peopleErrors],
  },
  {
    method: 'put',
    path: '/admin/api/v1/users/:id/roles',
    tag: 'accounts',
    summary: "Sets the person's roles (`user` always kept); audited as `account.roles-changed`",
    description:
      'Role names: a lower-case letter, then up to 31 lower-case letters, digits, `_`, `.` or `-`; at most 16 roles with `user`. ' +
      'Tokens issued from now on carry them, a session at its next refresh, OpenID clients in the `roles` claim (scope `roles`). ' +
      'Giving or taking `admin` needs an admin signed in (not an API key).',
    auth: 'adminApi',
    params: userParam,
    body: res.setRolesBodySchema,
    example: { params: { id: PERSON }, body: { roles: ['user', 'support'] }, ok: { success: true, roles: ['user', 'support'] } },
    ok: rolesAnswer,
    errors: [...peopleErrors],
  },
  {
    method: 'post',
    path: '/admin/api/v1/users/:id/roles',
    tag: 'accounts',
    summary: 'Gives the person one role; audited as `account.roles-changed`',
    auth: 'adminApi',
    params: userParam,
    body: res.addRoleBodySchema,
    example: { params: { id: PERSON }, body: { role: 'support' }, ok: { success: true, roles: ['user', 'support'] } },
    ok: rolesAnswer,
    errors: [...peopleErrors],
  },
  {
    method: 'delete',
    path: '/admin/api/v1/users/:id/roles/:role',
    tag: 'accounts',
    summary: 'Takes one role from the person (never `user`); audited as `account.roles-changed`',
    auth: 'adminApi',
    params: { ...userParam, role: 'the role name' },
    example: { params: { id: PERSON, role: 'support' }, ok: { success: true, roles: ['user'] } },
    ok: rolesAnswer,
    errors: [...peopleErrors],
  },
  {
    method: 'get',
    path: '/admin/api/v1/users/:id/export',
    tag: 'accounts',
    summary: 'Everything held about a person as one JSON document (GDPR art. 15 and 20, LGPD art. 18); audited as `account.exported`',
    description: 'Needs `users:read`. The parts are described in docs/accounts.md, "Export"; no secret (PIN hash, token, login result) is in it.',
    auth: 'adminApi',
    params: { id: 'the user id' },
    example: { params: { id: USER_ID }, ok: { success: true, export: EXPORT_EXAMPLE } },
    ok: { description: 'the export', schema: res.personExportResponseSchema },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'delete',
    path: '/admin/api/v1/users/:id',
    tag: 'accounts',
    summary: 'Erase a person: every key about them, leaving a receipt without personal data (GDPR art. 17, LGPD art. 18, DPDP Act)',
    description:
      'Needs `users:write`. Sessions and OpenID logins end first, ' +
      'identifier links go before the user record (the next message from the same phone makes a new account). ' +
      'A fault halfway leaves a plan a retry of this request finishes with the same receipt; a finished erase answers 404 after. docs/accounts.md, "Erase".',
    auth: 'adminApi',
    params: { id: 'the user id' },
    example: { params: { id: USER_ID }, ok: { success: true, receipt: RECEIPT_EXAMPLE } },
    ok: { description: 'erased; the receipt', schema: res.erasureResponseSchema },
    errors: ['VALIDATION_ERROR', 'AUTHENTICATION_FAILED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
];

ADMIN_ROUTES.push(...PEOPLE_ROUTES);
