import { AppError } from '../errors.js';
import type { AppContext } from './context.js';

/** A VALIDATION_ERROR naming one field, the error model's `details` shape. */
export function invalidField(field: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid data: ${field} ${message}`, { details: [{ field, message }] });
}

/** A user id as a path names it: ids are opaque (src/ids.ts), so any 8 to 64 URL-safe characters; anything else names nobody (400). */
export function userIdParam(ctx: AppContext): string {
  const id = ctx.params.id;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{8,64}$/.test(id))
    throw invalidField('id', 'must be a user id (8 to 64 characters: letters, digits, `_`, `-`)');
  return id;
}

/** One query parameter: undefined when absent or empty, 400 when given twice. */
export function queryOne(ctx: AppContext, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw invalidField(name, 'given more than once');
  return v === undefined || v === '' ? undefined : v;
}
