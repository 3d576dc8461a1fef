import { parseBearer } from '../../auth/bearer.js';
import type { Services } from '../../services.js';
import type { AppContext } from '../context.js';

/**
 * GET /profile → `{success, user: {id, name, surname, phone, roles}}`, an open session's only.
 * It authenticates itself rather than through `authenticate`: the session check and the user
 * are one round trip (Sessions.profile), and apps poll this endpoint.
 */
export function profile({ sessions }: Pick<Services, 'sessions'>) {
  return async (ctx: AppContext): Promise<void> => {
    const { claims, user } = await sessions.profile(parseBearer(ctx.get('authorization')) ?? undefined);
    // the access line names the user
    ctx.state.claims = claims;
    ctx.body = { success: true, user };
  };
}
