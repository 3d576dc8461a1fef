import * as req from '../validation/schemas.js';
import * as res from '../validation/responses.js';
import * as accounts from '../accounts/schemas.js';
import { ADMIN_ROUTES, EXPORT_EXAMPLE, RECEIPT_EXAMPLE } from './admin-paths.js';
import type { RouteDoc } from './route-doc.js';

/**
 * Every HTTP route the service answers, described once: the OpenAPI document (document.ts) is
 * built from this list and the JSON Schemas that validate requests (validation/schemas.ts) and
 * describe responses (validation/responses.ts). test/openapi/routes.test.ts fails when the
 * router has a route this list lacks, or the other way round.
 *
 * Adding a route: add it to the route table (http/routes.ts), then add one entry here: method, path
 * (Koa style, `:id` for parameters), a summary, its auth, the request body's schema (the same
 * object its handler validates with), the 200 answer's schema (add it to
 * validation/responses.ts) and the error codes it can answer besides the common ones. The admin
 * API's routes are in admin-paths.ts.
 */

/** The examples' values, the same across routes so they read as one story. */
const EX = {
  pin: 'Zx8q-4Rt2-Lm9w-Pv6k-Jd3s-Hn5c',
  userId: 'gXH0aZyOJJFU5t-wQwvazg',
  sessionId: 'HcadC41Qu8BccuPc3Sgm-w',
  jwt: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJnWEgwYVp5T0pKRlU1dC13UXd2YXpnIn0.c2lnbmF0dXJl',
  user: { id: 'gXH0aZyOJJFU5t-wQwvazg', name: 'Ana', phone: '+5511999998888', roles: ['user'] },
} as const;

/** An Evolution API `messages.upsert` event carrying a login message. */
const EVOLUTION_EVENT = {
  event: 'messages.upsert',
  instance: 'main',
  data: {
    key: { remoteJid: '5511999998888@s.whatsapp.net', fromMe: false, id: '3EB0C431C26A1916E0A7' },
    pushName: 'Ana Silva',
    message: { conversation: 'PIN: 🍎🚀🐱🐶🌵🎲🦊🍩' },
    messageType: 'conversation',
    messageTimestamp: 1764600000,
  },
};

/** What the page and reference assets are served as. */
const ASSET_TYPES = ['application/javascript', 'text/css'];

const html = (description: string): RouteDoc['ok'] => ({ description, contentType: 'text/html' });

/** The webhook's paths (its Koa routes take what messaging/webhook-path.ts parses). */
const webhook = (path: string, summary: string, params?: Record<string, string>, exampleParams?: Record<string, string>): RouteDoc => ({
  method: 'post',
  path,
  tag: 'webhook',
  summary,
  description:
    'Answered once the events are stored in Redis; a worker matches logins. Authenticated by `X-Hub-Signature-256` (WEBHOOK_SECRET), an ' +
    'Evolution API JWT (WEBHOOK_JWT_KEY), a static bearer key (WEBHOOK_BEARER_KEY) or the path secret (WEBHOOK_PATH_SECRET). ' +
    'Header credentials are checked before the body is read (401 unread); a signed body is hashed as it arrives. Events that are not logins are ' +
    'answered 200 and counted as ignored; an authenticated body over 1 MiB is dropped with a 200 (a gateway would retry a 413); too many ' +
    "requests at once from one network, or unverified bytes over the node's budget, are 429.",
  auth: 'webhook',
  ...(params ? { params } : {}),
  body: { type: 'object', description: 'the gateway event as the gateway sends it (see docs/gateways.md)' },
  ok: { description: 'received', schema: res.webhookReceiptSchema },
  errors: ['AUTHENTICATION_FAILED', 'NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'NETWORK_ERROR'],
  example: { body: EVOLUTION_EVENT, ...(exampleParams ? { params: exampleParams } : {}), ok: { received: true, accepted: 1, ignored: 0 } },
});

export const ROUTES: RouteDoc[] = [
  {
    method: 'get',
    path: '/health',
    tag: 'operator',
    summary: 'Liveness and Redis reachability',
    description: 'Answers within about a second: 503 with `status: "unavailable"` and `activePins: null` while Redis does not answer (same body shape).',
    ok: { description: 'Redis answers', schema: res.healthSchema },
    errors: [],
    example: { ok: { status: 'ok', timestamp: '2026-12-01T21:00:00.000Z', activePins: 3, instance: 'web.1' } },
    other: { 503: { description: 'Redis does not answer: `status: "unavailable"`, `activePins: null`', schema: res.healthSchema } },
  },
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    tag: 'session',
    summary: 'The public keys tokens are verified with (check a token offline, without a secret)',
    description:
      'Cacheable for 5 minutes; a new key is published at least that long before it signs. ' +
      'The OpenID provider (when OIDC_CLIENTS is set) serves the same set as its jwks_uri; ' +
      'its own endpoints live under /oidc (see docs/oidc.md and its discovery document).',
    ok: { description: 'the key set', schema: res.jwksResponseSchema, contentType: 'application/jwk-set+json' },
    errors: [],
  },
  {
    method: 'post',
    path: '/register-pin',
    tag: 'login',
    summary: 'Register a PIN with the emoji string the person will send',
    description:
      "Starts a login. The person then sends `PIN: <emoji string>` (or the bare emoji string) to the service's WhatsApp number: " +
      '`whatsappNumber`, a healthy one of its numbers. ' +
      'Registering the same PIN and emoji string again while pending is idempotent (same pinId, seconds left). ' +
      'Send an `Idempotency-Key` header (or `idempotencyKey` in the body), new for each attempt and the same on its retries: ' +
      'a retry of an attempt that was applied (a 503 or a lost answer) then gets the same pinId and emoji string, also when the server draws the string.',
    body: req.registerPinSchema,
    ok: { description: 'registered (or already registered)', schema: res.registerPinResponseSchema },
    example: {
      body: { pin: EX.pin },
      ok: {
        success: true,
        message: 'PIN registered',
        pinId: 'Tl0PgBG7ah1HeCAaLo_lyQ',
        expiresIn: 180,
        emojiString: '🍎🚀🐱🐶🌵🎲🦊🍩',
        whatsappNumber: '15551234567',
      },
    },
    errors: ['LOGIN_DENIED', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'post',
    path: '/check-login',
    tag: 'login',
    summary: 'Poll a registration: pending, or the tokens (once)',
    description:
      'Verified results are handed out once (then 404) and stay collectable at least VERIFIED_GRACE_SECONDS after the login. Poll at most once a second.',
    body: req.checkLoginSchema,
    ok: { description: 'pending, or verified with tokens', schema: res.checkLoginResponseSchema },
    example: { body: { pin: EX.pin }, ok: { success: true, verified: true, token: EX.jwt, refreshToken: EX.jwt, user: EX.user } },
    errors: ['PIN_NOT_FOUND', 'PIN_EXPIRED', 'LOGIN_DENIED', 'LOGIN_FAILED', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'post',
    path: '/refresh-token',
    tag: 'session',
    summary: 'Rotate the refresh token (or get a new pair by user id)',
    description:
      '`{refreshToken}` rotates it: presenting a spent one closes the whole session. `{id}` needs an unexpired access token of that user. ' +
      'The bearer access token may be expired.',
    auth: 'bearerExpiredOk',
    body: req.refreshSchema,
    ok: { description: 'a new access and refresh token', schema: res.tokenPairSchema },
    example: { body: { refreshToken: EX.jwt }, ok: { success: true, token: EX.jwt, refreshToken: EX.jwt } },
    errors: ['AUTHENTICATION_FAILED', 'REFRESH_TOKEN_EXPIRED', 'FORBIDDEN', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/profile',
    tag: 'session',
    summary: 'The signed-in user',
    auth: 'bearer',
    ok: { description: 'the user', schema: res.profileResponseSchema },
    example: { ok: { success: true, user: { ...EX.user, surname: 'Silva' } } },
    errors: ['AUTHENTICATION_FAILED', 'NETWORK_ERROR'],
  },
  {
    method: 'post',
    path: '/logout',
    tag: 'session',
    summary: "Close the token's session at once",
    auth: 'bearer',
    body: req.logoutSchema,
    ok: { description: 'logged out', schema: res.messageResponseSchema },
    example: { body: { userId: EX.userId }, ok: { success: true, message: 'Logged out' } },
    errors: ['AUTHENTICATION_FAILED', 'FORBIDDEN', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/sessions',
    tag: 'session',
    summary: "The caller's open sessions (devices) and OpenID logins (apps signed in through /oidc)",
    auth: 'bearer',
    ok: { description: 'the sessions, the current one marked', schema: res.sessionsListResponseSchema },
    example: {
      ok: {
        success: true,
        sessions: [
          {
            id: EX.sessionId,
            kind: 'app',
            createdAt: '2026-12-01T21:00:00.000Z',
            lastUsedAt: '2026-12-01T21:10:00.000Z',
            expiresAt: '2026-12-31T21:10:00.000Z',
            device: 'Chrome on Windows',
            ip: '203.0.113.x',
            current: true,
          },
        ],
      },
    },
    errors: ['AUTHENTICATION_FAILED', 'NETWORK_ERROR'],
  },
  {
    method: 'delete',
    path: '/sessions/:id',
    tag: 'session',
    summary:
      "Close one of the caller's sessions, or end one OpenID login (`oidc.` ids: its grant, tokens and provider sessions); its tokens are refused from then on",
    auth: 'bearer',
    params: { id: "a session id from GET /sessions (an OpenID login's starts with `oidc.`)" },
    ok: { description: 'closed', schema: res.messageResponseSchema },
    example: { params: { id: EX.sessionId }, ok: { success: true, message: 'Session closed' } },
    errors: ['AUTHENTICATION_FAILED', 'VALIDATION_ERROR', 'SESSION_NOT_FOUND', 'NETWORK_ERROR'],
  },
  {
    method: 'delete',
    path: '/sessions',
    tag: 'session',
    summary: "Sign out everywhere: close all of the caller's sessions and end every OpenID login",
    auth: 'bearer',
    ok: { description: 'closed', schema: res.signOutEverywhereResponseSchema },
    example: { ok: { success: true, message: 'Signed out everywhere', closed: 2 } },
    errors: ['AUTHENTICATION_FAILED', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/account/export',
    tag: 'accounts',
    summary: 'A copy of everything held about the caller, as one JSON document (GDPR art. 15 and 20, LGPD art. 18 II and V)',
    description:
      'The same document as the admin API\'s export; audited as `account.exported`. One a minute (429 with Retry-After past it). docs/accounts.md, "Export".',
    auth: 'bearer',
    ok: { description: 'the export', schema: accounts.personExportResponseSchema },
    example: { ok: { success: true, export: EXPORT_EXAMPLE } },
    errors: ['AUTHENTICATION_FAILED', 'NOT_FOUND', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'delete',
    path: '/account',
    tag: 'accounts',
    summary: "Erase the caller's account: every session ends and every key about them goes (GDPR art. 17, LGPD art. 18 VI)",
    description:
      'Answers the receipt (no personal data; actor `user`). The token is refused from then on; the next message from the same phone makes a new account. ' +
      'docs/accounts.md, "Erase".',
    auth: 'bearer',
    ok: { description: 'erased; the receipt', schema: accounts.erasureResponseSchema },
    example: { ok: { success: true, receipt: { ...RECEIPT_EXAMPLE, actor: 'user' } } },
    errors: ['AUTHENTICATION_FAILED', 'NOT_FOUND', 'NETWORK_ERROR'],
  },
  {
    method: 'post',
    path: '/send-message',
    tag: 'messaging',
    summary: 'Queue a WhatsApp message to a phone number',
    auth: 'bearer',
    body: req.sendMessageSchema,
    example: {
      body: { phoneNumber: '+5511999998888', message: 'Your table is ready.' },
      ok: { success: true, message: 'Message queued', messageId: 'msg_3EB0C431C26A1916E0A7', channel: 'evolution:main' },
    },
    ok: {
      description: 'queued (sent by a worker, retried with backoff), headed by who sent it; a text carrying a sign-in code or a chat answer is 400',
      schema: res.sendMessageResponseSchema,
    },
    errors: ['AUTHENTICATION_FAILED', 'IDEMPOTENCY_KEY_REUSED', 'RATE_LIMITED', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/messages/:id',
    tag: 'messaging',
    summary: 'Where a message sent with /send-message got to (sender only)',
    description: 'queued → sent → delivered → read, or failed, with the time of each. Anyone but the sender, like an unknown or expired id, gets 404.',
    auth: 'bearer',
    params: { id: 'the messageId /send-message answered' },
    example: {
      params: { id: 'msg_3EB0C431C26A1916E0A7' },
      ok: {
        success: true,
        messageId: 'msg_3EB0C431C26A1916E0A7',
        status: 'delivered',
        channel: 'evolution:main',
        kind: 'relayed',
        gatewayMessageId: '3EB0C431C26A1916E0A8',
        at: { queued: 1764600000000, sent: 1764600000400, delivered: 1764600001900 },
        error: null,
      },
    },
    ok: { description: 'its delivery record', schema: res.messageStatusResponseSchema },
    errors: ['AUTHENTICATION_FAILED', 'VALIDATION_ERROR', 'MESSAGE_NOT_FOUND', 'NETWORK_ERROR'],
  },
  webhook('/messaging-endpoint', "The gateway's webhook (Evolution API or WhatsApp Cloud API events)"),
  webhook(
    '/messaging-endpoint/:first',
    'The webhook with an Evolution by-events suffix (`/messages-upsert`) or a WEBHOOK_PATH_SECRET segment',
    {
      first: 'an Evolution event name in kebab case, or the WEBHOOK_PATH_SECRET',
    },
    { first: 'messages-upsert' },
  ),
  webhook(
    '/messaging-endpoint/:first/:second',
    'The webhook with a WEBHOOK_PATH_SECRET segment and an Evolution by-events suffix',
    {
      first: 'the WEBHOOK_PATH_SECRET',
      second: 'an Evolution event name in kebab case',
    },
    { first: 'your-webhook-path-secret', second: 'messages-upsert' },
  ),
  {
    method: 'get',
    path: '/messaging-endpoint',
    tag: 'webhook',
    summary: 'WhatsApp Cloud API subscription handshake',
    auth: 'verifyToken',
    query: { 'hub.mode': '`subscribe`', 'hub.verify_token': 'must equal WEBHOOK_VERIFY_TOKEN', 'hub.challenge': 'echoed back' },
    example: { query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'your-verify-token', 'hub.challenge': '1158201444' } },
    ok: { description: '`hub.challenge`, as text', contentType: 'text/plain' },
    errors: ['FORBIDDEN'],
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'operator',
    summary: 'Prometheus metrics of every process',
    description: 'Served when ADMIN_PASSWORD or METRICS_TOKEN is set (else 404).',
    auth: 'metrics',
    ok: { description: 'Prometheus text format', contentType: 'text/plain' },
    errors: ['AUTHENTICATION_FAILED', 'NOT_FOUND', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/admin/queues',
    tag: 'operator',
    summary: 'Queue dashboard (Bull Board)',
    description: 'Served when ADMIN_USER and ADMIN_PASSWORD are set (else 404); its own assets and JSON API live under this path.',
    auth: 'admin',
    ok: html('the dashboard'),
    errors: ['AUTHENTICATION_FAILED', 'NOT_FOUND', 'NETWORK_ERROR'],
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'pages',
    summary: 'This document',
    ok: { description: 'OpenAPI 3.1', schema: { type: 'object' } },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    tag: 'pages',
    summary: 'API reference page (Swagger UI, served by the service)',
    ok: html('the reference page'),
    errors: [],
  },
  {
    method: 'get',
    path: '/docs/:asset',
    tag: 'pages',
    summary: "The reference page's script and styles",
    params: { asset: 'file name' },
    example: { params: { asset: 'swagger-ui.css' } },
    ok: { description: 'JavaScript or CSS', contentType: ASSET_TYPES },
    errors: ['NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/',
    tag: 'pages',
    summary: 'Login page (when DEMO_PAGE is on)',
    description:
      'Shows the emoji string the server drew, a QR code and a wa.me link with the message prefilled, the time left, then the profile. ' +
      'Uses the typed client. The same page (src/demo/page.ts) is the OpenID login step. Sent brotli- or gzip-compressed when the request accepts it.',
    ok: html('the login page'),
    errors: ['NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/admin',
    tag: 'pages',
    summary: 'Operator console',
    description:
      'Sign in with pin-auth itself (the chat login; the person needs the `admin` role), ' +
      'then search people, see their identifiers, sessions and events, change roles, end sessions, block, erase, create and revoke API keys ' +
      "and follow the audit trail live, all through the admin API (`/admin/api/v1`) with the session's access token. " +
      'In the language of `Accept-Language`; docs/accounts.md, "The console".',
    ok: html('the console'),
    errors: [],
  },
  {
    method: 'get',
    path: '/admin/console/:asset',
    tag: 'pages',
    summary: "The console's script and styles",
    description: '`console.js` (application/javascript), `console.css` (text/css); compressed at build, sent brotli or gzip when accepted.',
    params: { asset: 'file name' },
    example: { params: { asset: 'console.css' } },
    ok: { description: 'JavaScript or CSS', contentType: ASSET_TYPES },
    errors: ['NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/demo/:asset',
    tag: 'pages',
    summary: "The login page's script, styles and icon (when DEMO_PAGE is on or OpenID clients are configured)",
    description:
      '`app.js` (application/javascript), `style.css` (text/css), `favicon.svg` (image/svg+xml); compressed at build, sent brotli or gzip when accepted.',
    params: { asset: 'file name' },
    example: { params: { asset: 'style.css' } },
    ok: { description: 'JavaScript, CSS or SVG', contentType: [...ASSET_TYPES, 'image/svg+xml'] },
    errors: ['NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/demo/emoji/:asset',
    tag: 'pages',
    summary: 'The pictures of the emoji the server draws (when DEMO_PAGE is on or OpenID clients are configured)',
    description:
      'One Twemoji SVG per emoji of the alphabet, named by its code point in lowercase hex (e.g. ' +
      '`1f34e.svg` for 🍎), so the code shows in colour where no emoji font is installed; any other name is 404.',
    params: { asset: "the emoji's code point in lowercase hex, then `.svg`" },
    example: { params: { asset: '1f34e.svg' } },
    ok: { description: 'SVG', contentType: 'image/svg+xml' },
    errors: ['NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/favicon.ico',
    tag: 'pages',
    summary: "The service's icon (when DEMO_PAGE is on or OpenID clients are configured)",
    ok: { description: 'ICO', contentType: 'image/x-icon' },
    errors: ['NOT_FOUND'],
  },
  ...ADMIN_ROUTES,
];
