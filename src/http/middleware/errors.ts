import type { Next } from 'koa';
import { AppError, redisFault, toAppError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { AppContext } from '../context.js';

/**
 * The one place errors become responses: the one error body `{success: false, error, message}`, never a stack trace. Errors of
 * koa-bodyparser, raw-body and the router (which carry an http `status`) keep their meaning.
 */
function fromHttpError(err: unknown): AppError | null {
  if (!(err instanceof Error) || err instanceof AppError) return null;
  const status = (err as { status?: unknown }).status;
  const type = (err as { type?: unknown }).type;
  // zlib failing on a corrupt `Content-Encoding: gzip|deflate` body (koa-bodyparser inflates it)
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_')) return new AppError('VALIDATION_ERROR', 'Malformed compressed body');
  if (typeof status !== 'number') return null;
  if (status === 413 || type === 'entity.too.large') return new AppError('PAYLOAD_TOO_LARGE');
  if (status === 415) return new AppError('VALIDATION_ERROR', 'Content-Type must be application/json');
  // 501: a method the router does not know at all (PROPFIND...): still the client's doing
  if (status === 405 || status === 501) return new AppError('METHOD_NOT_ALLOWED');
  if (status === 404) return new AppError('NOT_FOUND');
  if (status === 400) return new AppError('VALIDATION_ERROR', 'Malformed request body');
  if (status >= 400 && status < 500) return new AppError('VALIDATION_ERROR', 'Invalid request');
  return null;
}

/** What anything thrown while answering becomes; faults on our side (5xx) are logged. */
export function errorFor(thrown: unknown, log: () => Logger | undefined): AppError {
  const err = fromHttpError(thrown) ?? toAppError(thrown);
  const cause = err.cause instanceof Error ? err.cause.message : String(err.cause ?? err.message);
  // a fault of ours carries its stack; an unavailable store is an expected condition: one warn line
  if (err.status === 500) log()?.error('request failed', { code: err.code, error: cause, stack: err.cause instanceof Error ? err.cause.stack : undefined });
  else if (err.status > 500) log()?.warn('request refused: store unavailable', { code: err.code, fault: redisFault(err.cause) ?? 'other', error: cause });
  return err;
}

export function errorHandler() {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new AppError('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
        // the router's allowedMethods() answers these bare; its Allow header stays set
        if (ctx.status === 405 || ctx.status === 501) throw new AppError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (thrown) {
      const err = errorFor(thrown, () => ctx.state.log);
      ctx.status = err.status;
      // a body refused half-read (too large, corrupt compression) closes its connection,
      // lingering: the middleware outside this one (lingering-close.ts)
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      ctx.body = err.toBody();
    }
  };
}
