import { UnrecoverableError, type Job } from 'bullmq';
import { LoginProcessor, type LoginOutcome } from '../../auth/login.js';
import { emojiFromChat } from '../../messaging/pin-text.js';
import type { Step } from '../../redis/scripts.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { Services } from '../../services.js';
import { retryOrGiveUp } from '../inbound-retry.js';
import type { InboundJob, InboundMessage } from '../jobs.js';
import { ChatReplies } from '../replies.js';

export interface InboundHooks {
  onOutcome?: (outcome: LoginOutcome['outcome'], job: InboundJob) => void;
}

/**
 * How long the sender of a message that matched nothing is kept, so an edit of it can sign in:
 * Evolution's `messages.edited` names the original message but not always its sender, and
 * WhatsApp allows edits for 15 minutes.
 */
const EDITABLE_SECONDS = 20 * 60;

/**
 * The `inbound` processor: a chat message becomes a login (or the confirmation question, the
 * answer to it, or STOP), the registering sockets hear of it, and the person gets a reply on
 * the channel the message came on (ChatReplies). An edit is a new attempt with the edited text.
 * A username-only sender (no phone) who sends a code learns why they cannot sign in this way.
 */
export function inboundProcessor(services: Services, notifier: Notifier, hooks: InboundHooks = {}) {
  const { config, keys, scripts, tokens, sessions, limits, queues, log, redis } = services;
  const logins = new LoginProcessor(scripts, keys, tokens, sessions, {
    graceSeconds: config.verifiedGraceSeconds,
    confirm: config.loginConfirmation,
    stepwise: config.redis.kind === 'cluster',
  });
  const replies = new ChatReplies(queues, limits, config.replies, config.defaultChannel);

  /** An edit whose event did not name the sender: the sender of the message it edits, if kept. */
  const withSender = async (message: InboundMessage): Promise<InboundMessage> => {
    if (message.phone !== null || message.editOf === undefined || message.userId !== undefined) return message;
    const kept = await redis.get(keys.sender(message.editOf));
    if (kept === null) return message;
    const { phone, displayName } = JSON.parse(kept) as { phone: string; displayName: string | null };
    return { ...message, phone, displayName };
  };
  const keepSender = (message: InboundMessage): Promise<unknown> =>
    redis.set(keys.sender(message.id), JSON.stringify({ phone: message.phone, displayName: message.displayName }), 'EX', EDITABLE_SECONDS);
  /** A mistyped code is "not a code" or "no match": kept, so that its correction by edit can sign in. */
  const editable = (message: InboundMessage): boolean => message.phone !== null && message.editOf === undefined;

  const handle = async (job: Job<InboundJob>): Promise<LoginOutcome['outcome']> => {
    const message = await withSender(job.data.message);
    const result = await logins.process({ ...job.data, message });
    hooks.onOutcome?.(result.outcome, job.data);
    const meta = { jobId: job.id, channel: message.channel, edit: message.editOf !== undefined || undefined };
    switch (result.outcome) {
      case 'logged-in':
        // tokens leave only once their session is on the replicas (REDIS_WAIT_REPLICAS); if not,
        // the job fails and its retry finds the stored login and announces it then
        await services.replicas.sync();
        notifier.loginSucceeded(result.pinHash, result.result);
        log.info('login', { pinId: result.pinId, userId: result.result.user.id, ...meta });
        await replies.answer(message, { kind: 'signed-in' });
        break;
      case 'confirmation-asked': {
        notifier.awaitingConfirmation(result.pinHash, result.pinId);
        log.info('login awaits confirmation in the chat', { pinId: result.pinId, ...meta });
        const requestedAt = new Date(result.expiresAt - config.pinTtlSeconds * 1000);
        await replies.answer(message, { kind: 'confirm', origin: result.origin, requestedAt });
        break;
      }
      case 'denied':
        notifier.loginDenied(result.pinHash, result.pinId);
        // possibly a phishing attempt: who asked for it, as far as we may say
        log.warn('login denied in the chat', { pinId: result.pinId, device: result.origin.device, network: result.origin.ip, ...meta });
        await replies.answer(message, { kind: 'denied' });
        break;
      case 'already-done':
        // an earlier attempt logged in and died before its reply was queued (or after: the
        // reply's job id makes this a no-op); the person still hears they are signed in
        if (result.signedIn) await replies.answer(message, { kind: 'signed-in' });
        else log.debug('inbound message skipped', { outcome: result.outcome, ...meta });
        break;
      case 'unanswered':
        await replies.answer(message, { kind: 'nothing-to-confirm' });
        break;
      case 'signed-out':
        log.warn('signed out everywhere from the chat', { sessions: result.sessions, ...meta });
        await replies.answer(message, { kind: 'signed-out', sessions: result.sessions });
        break;
      case 'no-match':
        log.info('chat code matched no registration', meta);
        if (editable(message)) await keepSender(message);
        await replies.answer(message, { kind: 'unknown-code' });
        break;
      case 'not-a-code':
        if (editable(message)) await keepSender(message);
        log.debug('inbound message skipped', { outcome: result.outcome, ...meta });
        break;
      case 'no-phone':
        if (message.userId !== undefined && message.text !== null && emojiFromChat(message.text) !== null) {
          // never silence: the person learns why nothing happens
          log.info('username-only sender answered', meta);
          await replies.answer(message, { kind: 'username-only' });
        } else log.warn('inbound message without a resolvable phone', { ...meta, provider: message.provider });
        break;
      default:
        log.debug('inbound message skipped', { outcome: result.outcome, ...meta });
    }
    return result.outcome;
  };

  return async (job: Job<InboundJob>): Promise<LoginOutcome['outcome']> => {
    try {
      return await handle(job);
    } catch (err) {
      // a Redis fault is waited out; anything else has OTHER_FAULT_ATTEMPTS (inbound-retry.ts)
      const outcome = retryOrGiveUp(err, job.attemptsMade);
      if (outcome instanceof UnrecoverableError) {
        // failed for good: a login it claimed must not stay "pending" for ever
        await endFailedLogin(services, notifier, job.data).catch((e: unknown) =>
          log.warn('could not end a failed login', { jobId: job.id, error: e instanceof Error ? e.message : String(e) }),
        );
      }
      throw outcome;
    }
  };
}

/**
 * A login job failed for good after claiming a registration: the registration ends as failed
 * (check-login 410 LOGIN_FAILED), the session opened at the claim is closed, and the
 * registering sockets get `pin-error {error: LOGIN_FAILED}`. Nothing happens when the job had
 * claimed nothing or its login was completed.
 */
export async function endFailedLogin(services: Pick<Services, 'keys' | 'scripts' | 'config' | 'log'>, notifier: Pick<Notifier, 'loginFailed'>, job: InboundJob): Promise<boolean> {
  const { keys, scripts, config, log } = services;
  // the message's record names the claim (steps/fail-*.lua): on a cluster it, the registration
  // and the user's session are three slots; the registration is marked first, and a retry after
  // a crash finds it failed by this message and still closes the session
  const [pinHash, claimSid = '', claimUser = ''] = await scripts.step({ step: 'fail-lookup', keys: [keys.message(job.message.id)], args: [job.nonce] });
  if (pinHash === undefined) return false;
  const close = (userId: string, sid: string): Step => ({
    step: 'session-close',
    keys: [keys.session(userId, sid), keys.rotation(userId, sid), keys.userSessions(userId)],
    args: [sid],
  });
  const fail: Step = { step: 'fail-registration', keys: [keys.registration(pinHash)], args: [job.message.id, config.expiredMemorySeconds * 1000] };
  const known = claimSid !== '' && claimUser !== '';
  const [pinId, sid = '', userId = '', first] = await scripts.phase('fail', known ? [fail, close(claimUser, claimSid)] : [fail]);
  if (pinId === undefined) return false;
  // a record without the session (written by an older claim): the registration names it
  if (!known && sid !== '' && userId !== '') await scripts.phase('fail', [close(userId, sid)]);
  // ended before (this is a retry): the session is closed now, nothing else to tell
  if (first !== '1') return false;
  notifier.loginFailed(pinHash, pinId);
  log.warn('login failed for good; the client is told to start again', { pinId });
  return true;
}
