import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppContext } from '../context.js';

/**
 * GET /messages/:id (after `authenticate`): where a message sent through /send-message got to
 * (queued, sent, delivered, read, failed), with the gateway's id for it and when each status
 * was reached. The sender only: anyone else, like an unknown or expired id, gets 404
 * MESSAGE_NOT_FOUND (ids are sequential, so a 403 would tell which exist).
 */
export function messageStatus({ delivery }: Pick<Services, 'delivery'>) {
  return async (ctx: AppContext): Promise<void> => {
    const { id } = validate.messageIdParams({ id: ctx.params.id });
    const found = await delivery.read(id);
    if (found === null || found.owner !== ctx.state.claims!.sub) throw new AppError('MESSAGE_NOT_FOUND');
    ctx.body = { success: true, ...found.record };
  };
}
