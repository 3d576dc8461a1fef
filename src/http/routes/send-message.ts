import { randomBytes } from 'node:crypto';
import { chatCommandIn, relayedText, senderLabel } from '../../chat/relay.js';
import { AppError } from '../../errors.js';
import type { Services } from '../../services.js';
import { validate } from '../../validation/validate.js';
import type { AppContext } from '../context.js';
import { IDEMPOTENCY_HEADER, IdempotencyKeys } from '../idempotency.js';

/** The id of a message sent without Idempotency-Key (`s` + 96 random bits; keyed ones start with `i`). */
const newMessageId = (): string => `s${randomBytes(12).toString('base64url')}`;

/**
 * POST /send-message (after `authenticate` and the JSON body): queued on `outbound` for the
 * channel named (one of those configured; absent: the default channel), recorded for delivery
 * tracking, answered once both are in Redis with the id that `GET /messages/:id` takes. Header `Idempotency-Key` (optional, 1-255
 * printable ASCII): a retry with the same key and body answers the same messageId and sends
 * once; another body under the key is 422. The text goes out headed by who sent it, and a text
 * carrying a sign-in code or a chat answer is refused (chat/relay.ts).
 */
export function sendMessage(services: Services) {
  const { channels, defaultChannel } = services.config;
  const idempotency = new IdempotencyKeys(services.redis, services.keys, services.config.idempotencyKeySeconds);
  return async (ctx: AppContext): Promise<void> => {
    const { phoneNumber, message, channel = defaultChannel } = validate.sendMessage(ctx.request.body);
    if (!channels.includes(channel)) {
      const details = [{ field: 'channel', message: `must be one of the configured channels: ${channels.join(', ')}` }];
      throw new AppError('VALIDATION_ERROR', `Invalid data: channel ${details[0]!.message}`, { details });
    }
    // the service's own conversation (codes, YES / NO / STOP) is never relayed (chat/relay.ts)
    const command = chatCommandIn(message);
    if (command !== null) {
      const details = [{ field: 'message', message: `${command}: only ${services.config.replies.appName} itself asks for those` }];
      throw new AppError('VALIDATION_ERROR', `Invalid data: message ${details[0]!.message}`, { details });
    }
    const key = IdempotencyKeys.parse(ctx.get(IDEMPOTENCY_HEADER));
    const userId = ctx.state.claims!.sub;
    const [name, phone] = await services.redis.hmget(services.keys.user(userId), 'name', 'phone');
    const text = relayedText(services.config.replies, senderLabel(name ?? null, phone ?? null), message);
    // with a job id (idempotent sends) BullMQ keeps the existing job, and the tracker's
    // `queued` never moves a record back: both are safe to repeat
    // every job has an id of ours: it picks the outbound partition, and ids BullMQ counts per
    // queue would repeat across partitions
    const queue = async (jobId = newMessageId()): Promise<string> => {
      await services.queues.outboundFor(jobId).add('send', { to: phoneNumber, text, kind: 'manual', userId, channel }, { jobId });
      await services.delivery.queued(jobId, { owner: userId, kind: 'manual', channel });
      return jobId;
    };
    let messageId: string;
    if (key === undefined) {
      await services.limits.consume('send', userId);
      messageId = await queue();
    } else {
      const run = await idempotency.begin(userId, key, { phoneNumber, message, channel });
      if (run.first) {
        // a retry does not spend the budget again
        await services.limits.consume('send', userId).catch(async (err: unknown) => {
          await run.forget().catch(() => undefined);
          throw err;
        });
      }
      if (!run.done) {
        await queue(run.workId);
        await run.finish();
      }
      messageId = run.workId;
    }
    ctx.state.log.info('message queued', { jobId: messageId, channel, idempotencyKey: key !== undefined });
    ctx.body = { success: true, message: 'Message queued', messageId, channel };
  };
}
