import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppRouter } from '../context.js';
import { authenticate } from '../middleware/authenticate.js';
import { jsonBody } from '../middleware/json-body.js';

/** POST /send-message: queued on `outbound`, answered once the job is in Redis, with its id. */
export function registerSendMessageRoute(router: AppRouter, services: Services, bodyLimit: string): void {
  router.post('/send-message', authenticate(services.sessions), jsonBody(bodyLimit), async (ctx) => {
    const { phoneNumber, message } = validate.sendMessage(ctx.request.body);
    const userId = ctx.state.claims!.sub;
    await services.limits.consume('send', userId);
    const job = await services.queues.outbound.add('send', { to: phoneNumber, text: message, kind: 'manual', userId });
    ctx.state.log.info('message queued', { jobId: job.id });
    ctx.body = { success: true, message: 'Message queued', messageId: job.id };
  });
}
