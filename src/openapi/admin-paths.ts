import type { RouteDoc } from './route-doc.js';
import * as res from '../accounts/schemas.js';

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
];
