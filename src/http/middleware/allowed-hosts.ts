import type { Middleware } from 'koa';
import { AppError } from '../../errors.js';
import { hostAllowed } from '../../allowed-hosts.js';
import type { AppState } from '../context.js';

/**
 * ALLOWED_HOSTS for every HTTP request (sockets: realtime/admission.ts): a `Host` naming no
 * listed host is 403 FORBIDDEN (src/allowed-hosts.ts). Null when the list is empty.
 */
export function allowedHosts(hosts: readonly string[]): Middleware<AppState> | null {
  if (hosts.length === 0) return null;
  const listed = new Set(hosts);
  return (ctx, next) => {
    if (!hostAllowed(ctx.get('host'), listed)) throw new AppError('FORBIDDEN', 'This host name is not served here (ALLOWED_HOSTS)');
    return next();
  };
}
