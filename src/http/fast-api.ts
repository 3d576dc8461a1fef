import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import Bourne from '@hapi/bourne';
import { AppError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { ApiCall, ApiHandler, ApiRoute } from './api-core.js';
import { leanResponder, type OnLeanDone } from './lean-response.js';
import { requestIdFrom } from './middleware/request-context.js';
import { JSON_TYPE, readBody, TooLarge } from './read-body.js';
import { clientIp } from '../security/client-ip.js';

export interface FastApiOptions {
  api: Record<ApiRoute, ApiHandler>;
  log: Logger;
  /** the API's body limit in bytes (what the Koa routes' parser is given) */
  bodyLimit: number;
  /** TRUST_PROXY: the client is the last X-Forwarded-For hop (as Koa's `app.proxy` with maxIpsCount 1) */
  trustProxy: boolean;
  /** CORS_ORIGINS is set: a request with an Origin header goes through Koa's CORS middleware */
  cors: boolean;
  onDone?: OnLeanDone;
}

/** an info line when info lines are off: nothing made, nothing written */
const skip = (): void => undefined;

interface LeanRoute {
  method: 'GET' | 'POST';
  handler: ApiHandler;
  /** the Koa router's template, the route label of metrics and logs */
  label: string;
  json: boolean;
}

/** What koa-bodyparser's strict mode accepts: an object or an array (RFC 7159 whitespace first). */
const STRICT_JSON = /^[\x20\x09\x0a\x0d]*(\[|\{)/;

/**
 * The API's JSON body as the Koa routes' parser reads it (json-body.ts: koa-bodyparser in strict
 * mode): empty is `{}`, anything but an object or array, bad JSON or a `__proto__` key is
 * VALIDATION_ERROR "Malformed request body", over the limit PAYLOAD_TOO_LARGE.
 */
async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  let text: string;
  try {
    text = (await readBody(req, limit)).toString('utf8');
  } catch (err) {
    throw err instanceof TooLarge ? new AppError('PAYLOAD_TOO_LARGE') : err;
  }
  if (text.length === 0) return {};
  try {
    if (!STRICT_JSON.test(text)) throw new SyntaxError('not an object or array');
    return Bourne.parse(text, { protoAction: 'error' });
  } catch {
    throw new AppError('VALIDATION_ERROR', 'Malformed request body');
  }
}

/**
 * The endpoints an app polls (register-pin, check-login, profile, refresh-token) answered before
 * Koa, as the webhook is (fast-webhook.ts): at thousands of polls a second Koa's per-request
 * work (context, middleware chain, router, helmet) cost more CPU than the endpoint's own. The
 * logic is the handlers Koa's routes run too (api-core.ts); this reads the body as Koa's parser
 * does and answers as every lean answer is (lean-response.ts). Only the plain form of each
 * request is taken here: another method (OPTIONS, HEAD), another spelling of the path, a body
 * that is not plainly JSON (another type, a Content-Encoding) and, with CORS on, a request with
 * an Origin go on to `next` (Koa), which answers them as before.
 */
export async function fastApi(options: FastApiOptions, next: RequestListener): Promise<RequestListener> {
  const { api, log, bodyLimit, trustProxy, cors, onDone } = options;
  const { answer, fail } = await leanResponder(log, onDone);
  const infoLines = log.isLevelEnabled('info');
  const routes = new Map<string, LeanRoute>([
    ['/register-pin', { method: 'POST', handler: api.registerPin, label: '/register-pin', json: true }],
    ['/check-login', { method: 'POST', handler: api.checkLogin, label: '/check-login', json: true }],
    ['/profile', { method: 'GET', handler: api.profile, label: '/profile', json: false }],
    ['/refresh-token', { method: 'POST', handler: api.refreshToken, label: '/refresh-token', json: true }],
  ]);

  const takes = (req: IncomingMessage, route: LeanRoute | undefined): route is LeanRoute => {
    if (route === undefined || req.method !== route.method) return false;
    if (cors && req.headers.origin !== undefined) return false;
    if (!route.json) return true;
    const type = req.headers['content-type'];
    const encoding = req.headers['content-encoding'];
    return type !== undefined && JSON_TYPE.test(type) && (encoding === undefined || encoding === 'identity');
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, route: LeanRoute): Promise<void> => {
    const incoming = req.headers['x-request-id'];
    const at = { method: route.method, route: route.label, requestId: requestIdFrom(typeof incoming === 'string' ? incoming : undefined), started: process.hrtime.bigint(), userId: undefined as string | undefined };
    let child: Logger | undefined;
    let userLog: Logger | undefined;
    const requestLog = (): Logger => (child ??= log.child({ requestId: at.requestId }));
    const call: ApiCall = {
      body: () => readJson(req, bodyLimit),
      ip: clientIp(req.headers, req.socket.remoteAddress, trustProxy),
      userAgent: req.headers['user-agent'] ?? '',
      authorization: req.headers.authorization ?? '',
      idempotencyKey: String(req.headers['idempotency-key'] ?? ''),
      log: () => (call.claims ? (userLog ??= requestLog().child({ userId: call.claims.sub })) : requestLog()),
      // a request's child logger costs ≈ 2 µs to make: not made for a line that is not written
      info: infoLines ? (message, fields) => call.log().info(message, fields) : skip,
    };
    try {
      const body = await route.handler(call);
      at.userId = call.claims?.sub;
      answer(req, res, at, 200, body);
    } catch (thrown) {
      at.userId = call.claims?.sub;
      fail(req, res, at, thrown, call.log);
    }
  };

  return (req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const route = routes.get(query < 0 ? url : url.slice(0, query));
    if (takes(req, route)) void handle(req, res, route);
    else next(req, res);
  };
}
