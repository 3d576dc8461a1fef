import type { ErrorCode } from '../errors.js';

/** How one route is described (paths.ts, admin-paths.ts); document.ts builds the OpenAPI document from them. */
export type Auth = 'bearer' | 'bearerExpiredOk' | 'webhook' | 'admin' | 'adminApi' | 'metrics' | 'verifyToken';

export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa style: `/sessions/:id` */
  path: string;
  tag: 'login' | 'session' | 'messaging' | 'webhook' | 'operator' | 'accounts' | 'pages';
  summary: string;
  description?: string;
  auth?: Auth;
  /** the JSON Schema the handler validates its body with */
  body?: object;
  /** path parameters, by name */
  params?: Record<string, string>;
  /** query parameters, by name */
  query?: Record<string, string>;
  /** the 200 answer; an asset route names each content type it may carry */
  ok: { description: string; schema?: object; contentType?: string | string[] };
  /** codes this route answers besides INTERNAL_ERROR (all) and, with a body, VALIDATION_ERROR and PAYLOAD_TOO_LARGE */
  errors: ErrorCode[];
  /** answers that are not the error body, by status (health's 503 keeps the report's shape) */
  other?: Record<number, { description: string; schema: object }>;
  /**
   * What Swagger UI's "Try it out" fills in: a body, path and query values that pass the
   * route's validation, and the 200 answer's example. test/openapi/examples.test.ts sends each
   * to a running service and checks the answer is one the document gives.
   */
  example?: { body?: unknown; params?: Record<string, string>; query?: Record<string, string>; ok?: unknown };
}
