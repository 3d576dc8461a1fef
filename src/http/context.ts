import type { RouterContext, RouterInstance } from '@koa/router';
import type { TokenClaims } from '../auth/tokens.js';
import type { Logger } from '../observability/logger.js';

/** What middleware leaves on `ctx.state` for the handlers (middleware/request-context.ts). */
export interface AppState {
  readonly requestId: string;
  /** the request's logger: every line carries the request id, and the user once `claims` is set */
  readonly log: Logger;
  /** the verified access token's claims (authenticate.ts) */
  claims?: TokenClaims;
}

export type AppContext = RouterContext<AppState>;
export type AppRouter = RouterInstance<AppState>;
