import type { RequestMeta } from '../auth/sessions.js';
import type { Services } from '../services.js';
import type { AppContext } from './context.js';

/**
 * What an audit record says of the request it came with (docs/accounts.md, "The audit trail"):
 * the request id, the caller's IP group (security/ip-group.ts: an IPv4 address, an IPv6 /64
 * by default; never more), and the client when the route knows one (an OpenID client id).
 * Spread into AuditTrail.note's event, or handed to Sessions' calls.
 */
export function requestMeta(
  ctx: AppContext,
  services: Pick<Services, 'limits'>,
  client?: string,
): Required<Pick<RequestMeta, 'requestId' | 'ipGroup'>> & RequestMeta {
  return { requestId: ctx.state.requestId, ipGroup: services.limits.group(ctx.ip), ...(client !== undefined ? { client } : {}) };
}
