import type { RouterContext, RouterInstance } from '@koa/router';
import type { TokenClaims } from '../auth/tokens.js';
import type { Logger } from '../observability/logger.js';

/** What middleware leaves on `ctx.state` for the handlers. */
export interface AppState {
  requestId: string;
  log: Logger;
  claims?: TokenClaims;
}

export type AppContext = RouterContext<AppState>;
export type AppRouter = RouterInstance<AppState>;
