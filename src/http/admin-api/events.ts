import { AUDIT_TYPES, type AuditType } from '../../accounts/audit.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';

const TYPES = new Set<string>(AUDIT_TYPES);

function one(ctx: AppContext, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw new AppError('VALIDATION_ERROR', `${name} given more than once`);
  return v === undefined || v === '' ? undefined : v;
}

function time(ctx: AppContext, name: string): number | undefined {
  const v = one(ctx, name);
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new AppError('VALIDATION_ERROR', `${name} must be an ISO 8601 time`);
  return ms;
}

/** GET /admin/api/v1/events?userId&type=a,b&since&until&cursor&limit: the audit trail, newest first. */
export function listEvents(services: Services) {
  return async (ctx: AppContext): Promise<void> => {
    const typeList = one(ctx, 'type')?.split(',');
    for (const t of typeList ?? []) if (!TYPES.has(t)) throw new AppError('VALIDATION_ERROR', `Unknown event type ${t}`);
    const limitText = one(ctx, 'limit');
    const limit = limitText === undefined ? undefined : Number(limitText);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 200)) throw new AppError('VALIDATION_ERROR', 'limit must be 1..200');
    const cursor = one(ctx, 'cursor');
    if (cursor !== undefined && !/^\d{1,16}-\d{1,10}$/.test(cursor)) throw new AppError('VALIDATION_ERROR', 'Malformed cursor');
    const page = await services.audit.list({
      userId: one(ctx, 'userId'),
      types: typeList as AuditType[] | undefined,
      since: time(ctx, 'since'),
      until: time(ctx, 'until'),
      cursor,
      limit,
    });
    ctx.body = { success: true, ...page };
  };
}
