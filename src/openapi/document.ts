import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import * as req from '../validation/schemas.js';
import * as res from '../validation/responses.js';
import { ROUTES } from './paths.js';
import type { Auth, RouteDoc } from './route-doc.js';
import { SOCKET_EVENTS } from './socket-events.js';

/** One OpenAPI 3.1 document from the route list and the shared JSON Schemas. */

/** Schemas that get a name under components (by identity: the very objects the routes use). */
const NAMED: Record<string, object> = {
  ErrorBody: res.errorBodySchema,
  User: res.userSchema,
  ProfileUser: res.profileUserSchema,
  LoginResult: res.loginResultSchema,
  Health: res.healthSchema,
  RegisterPinRequest: req.registerPinSchema,
  RegisterPinResponse: res.registerPinResponseSchema,
  CheckLoginRequest: req.checkLoginSchema,
  CheckLoginPending: res.checkLoginPendingSchema,
  CheckLoginVerified: res.checkLoginVerifiedSchema,
  RefreshRequest: req.refreshSchema,
  TokenPair: res.tokenPairSchema,
  ProfileResponse: res.profileResponseSchema,
  LogoutRequest: req.logoutSchema,
  MessageResponse: res.messageResponseSchema,
  SendMessageRequest: req.sendMessageSchema,
  SendMessageResponse: res.sendMessageResponseSchema,
  WebhookReceipt: res.webhookReceiptSchema,
  SessionList: res.sessionsListResponseSchema,
};
const nameOf = new Map<object, string>(Object.entries(NAMED).map(([k, v]) => [v, k]));

/** A schema as a `$ref` when it has a name, with its named parts referenced too. */
function ref(schema: object): object {
  const name = nameOf.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  const s = schema as { oneOf?: object[] };
  if (s.oneOf) return { ...schema, oneOf: s.oneOf.map(ref) };
  return schema;
}

/** Named schemas, their own named parts referenced (the document stays small and readable). */
function components(): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [name, schema] of Object.entries(NAMED)) {
    const props = (schema as { properties?: Record<string, object> }).properties;
    out[name] = props
      ? { ...schema, properties: Object.fromEntries(Object.entries(props).map(([k, v]) => [k, nameOf.get(v) && nameOf.get(v) !== name ? ref(v) : v])) }
      : schema;
  }
  return out;
}

const SECURITY: Record<Auth, object> = {
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access token from check-login or auth-success' },
  bearerExpiredOk: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access token; may be expired' },
  webhook: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Hub-Signature-256',
    description: 'sha256=<HMAC of the body with WEBHOOK_SECRET>, or `Authorization: Bearer <Evolution API JWT>` with WEBHOOK_JWT_KEY',
  },
  admin: { type: 'http', scheme: 'basic', description: 'ADMIN_USER / ADMIN_PASSWORD' },
  adminApi: {
    type: 'http',
    scheme: 'bearer',
    description:
      "an admin's access token (a person with the `admin` role, " +
      "signed in through the chat) or an API key `pak_<id>_<secret>` with the route's scope (docs/accounts.md); " +
      'requests a browser marks as cross-site are refused',
  },
  metrics: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN (or the admin basic-auth login)' },
  verifyToken: { type: 'apiKey', in: 'query', name: 'hub.verify_token', description: 'WEBHOOK_VERIFY_TOKEN' },
};

/** Koa's `/sessions/:id` as OpenAPI's `/sessions/{id}`. */
export const openApiPath = (koaPath: string): string => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The codes a route can answer: its own, plus the ones every route (or every route with a body) has. */
export function routeErrors(route: RouteDoc): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.body) for (const c of ['VALIDATION_ERROR', 'PAYLOAD_TOO_LARGE'] as const) codes.add(c);
  codes.add('INTERNAL_ERROR');
  return [...codes];
}

const exampleOf = (values: Record<string, string> | undefined, name: string): { example?: string } =>
  values?.[name] !== undefined ? { example: values[name] } : {};

function operation(route: RouteDoc): object {
  const types = [route.ok.contentType ?? 'application/json'].flat();
  const responses: Record<string, object> = {
    '200': {
      description: route.ok.description,
      content: Object.fromEntries(
        types.map((t) => [
          t,
          route.ok.schema ? { schema: ref(route.ok.schema), ...(route.example?.ok !== undefined ? { example: route.example.ok } : {}) } : {},
        ]),
      ),
    },
  };
  for (const [status, other] of Object.entries(route.other ?? {})) {
    responses[status] = { description: other.description, content: { 'application/json': { schema: ref(other.schema) } } };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrors(route)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.join(', '),
      ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'seconds', schema: { type: 'integer' } } } } : {}),
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: '#/components/schemas/ErrorBody' }, { properties: { error: { enum: codes } } }] },
        },
      },
    };
  }
  const parameters = [
    ...Object.entries(route.params ?? {}).map(([name, description]) => ({
      name,
      in: 'path',
      required: true,
      description,
      schema: { type: 'string' },
      ...exampleOf(route.example?.params, name),
    })),
    ...Object.entries(route.query ?? {}).map(([name, description]) => ({
      name,
      in: 'query',
      description,
      schema: { type: 'string' },
      ...exampleOf(route.example?.query, name),
    })),
  ];
  return {
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    operationId: `${route.method}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase()) || 'Root'}`,
    ...(parameters.length ? { parameters } : {}),
    ...(route.auth ? { security: [{ [route.auth]: [] }] } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: ref(route.body), ...(route.example?.body !== undefined ? { example: route.example.body } : {}) } },
          },
        }
      : {}),
    responses,
  };
}

export interface DocumentOptions {
  version: string;
}

export function buildOpenApi(opts: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of ROUTES) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'pin-auth',
      version: opts.version,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Sign people in through a WhatsApp message: register a PIN with an emoji string, the person sends the emoji string to the ' +
        "service's number, and the client gets tokens by polling check-login or instantly over Socket.IO (see `x-socket-events`). " +
        'Every error is `{success: false, error: CODE, message}`; ' +
        'an unknown path answers 404 NOT_FOUND and a known path with another method 405 METHOD_NOT_ALLOWED (with `Allow`).',
    },
    tags: [
      { name: 'login', description: 'Start a login and collect its result' },
      { name: 'session', description: 'Tokens and the signed-in user' },
      { name: 'messaging', description: 'Messages to phones' },
      { name: 'webhook', description: 'For the messaging gateway' },
      { name: 'operator', description: 'Health, metrics, queue dashboard' },
      { name: 'accounts', description: 'The admin API: people, roles, blocks, erasure, export, API keys and the audit trail (docs/accounts.md)' },
      { name: 'pages', description: 'Pages for people and this document' },
    ],
    paths,
    components: { schemas: components(), securitySchemes: SECURITY },
    'x-error-codes': Object.fromEntries(Object.entries(ERROR_STATUS)),
    'x-socket-events': {
      description: 'Socket.IO on the same port, default path /socket.io. Websocket-only clients need no sticky sessions.',
      path: '/socket.io',
      clientToServer: SOCKET_EVENTS.clientToServer,
      serverToClient: SOCKET_EVENTS.serverToClient,
    },
  };
}
