import type { Job } from 'bullmq';
import { LoginProcessor, type LoginOutcome } from '../../auth/login.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { Services } from '../../services.js';
import type { InboundJob } from '../jobs.js';

export interface InboundHooks {
  onOutcome?: (outcome: LoginOutcome['outcome'], job: InboundJob) => void;
}

/**
 * The `inbound` processor: a chat message becomes a login, the registering sockets get
 * `auth-success`, and the person gets a reply (rate-limited per phone).
 */
export function inboundProcessor(services: Services, notifier: Notifier, hooks: InboundHooks = {}) {
  const { config, keys, scripts, tokens, limits, queues, log } = services;
  const logins = new LoginProcessor(scripts, keys, tokens, config.verifiedGraceSeconds);

  const reply = async (job: Job<InboundJob>, phone: string, kind: 'signed-in' | 'unknown-code'): Promise<void> => {
    if (!config.replies.enabled) return;
    // nobody can use the service to spam a number
    if (!(await limits.tryConsume('reply', phone))) return;
    const text = kind === 'signed-in' ? config.replies.signedIn : config.replies.unknownCode;
    // one reply per chat message, even when this job is retried after queueing it
    await queues.outbound.add('reply', { to: phone, text, kind }, { jobId: `r${job.data.message.id}` });
  };

  return async (job: Job<InboundJob>): Promise<LoginOutcome['outcome']> => {
    const result = await logins.process(job.data);
    hooks.onOutcome?.(result.outcome, job.data);
    switch (result.outcome) {
      case 'logged-in':
        notifier.loginSucceeded(result.pinHash, result.result);
        log.info('login', { pinId: result.pinId, userId: result.result.user.id, jobId: job.id });
        await reply(job, result.phone, 'signed-in');
        break;
      case 'no-match':
        log.info('chat code matched no registration', { jobId: job.id });
        await reply(job, result.phone, 'unknown-code');
        break;
      case 'no-phone':
        log.warn('inbound message without a resolvable phone', { jobId: job.id, provider: job.data.message.provider });
        break;
      default:
        log.debug('inbound message skipped', { outcome: result.outcome, jobId: job.id });
    }
    return result.outcome;
  };
}
