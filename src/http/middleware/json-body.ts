import bodyParser from 'koa-bodyparser';
import type { Next } from 'koa';
import { AppError } from '../../errors.js';
import type { AppContext } from '../context.js';

/** JSON-only body parsing for the API: other content types are VALIDATION_ERROR, oversize is 413. */
export function jsonBody(limit: string) {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: limit, strict: true });
  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (!ctx.is('application/json', '+json')) {
      // an empty body with no type is still "not JSON": the client gets told what to send
      throw new AppError('VALIDATION_ERROR', 'Content-Type must be application/json');
    }
    await parse(ctx, next);
  };
}
