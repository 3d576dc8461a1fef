import { UnrecoverableError, type Job } from 'bullmq';
import type { AuditEvent, AuditTrail } from '../../accounts/audit.js';
import { LoginProcessor, type IdentityChanges, type LoginOutcome } from '../../auth/login.js';
import type { Sessions } from '../../auth/sessions.js';
import type { TokenService } from '../../auth/tokens.js';
import type { Directory } from '../../accounts/directory.js';
import { ChatRights, type AccountEraser, type CommandResult, type OpenIdLoginList } from '../../accounts/chat-rights.js';
import type { Config } from '../../config.js';
import { identitiesOf } from '../../identity/identities.js';
import { chatIntent, isCommand, type CommandIntent } from '../../chat/intent.js';
import { emojiFromChat } from '../../chat/pin-text.js';
import type { Logger } from '../../observability/logger.js';
import type { RedisClient } from '../../redis/connection.js';
import type { Keys } from '../../redis/keys.js';
import type { ReplicaBarrier } from '../../redis/replicas.js';
import type { Scripts } from '../../redis/scripts.js';
import { closeSession } from '../../registrations/steps.js';
import type { Notifier } from '../../realtime/notifier.js';
import type { Limits } from '../../security/limits.js';
import { retryOrGiveUp } from '../inbound-retry.js';
import type { InboundJob, InboundMessage } from '../jobs.js';
import type { Queues } from '../queues.js';
import { ChatReplies, type WithheldReason } from '../replies.js';
import { refuseSender } from '../sender-rules.js';

/** What happened to accounts' identifiers (metrics: observability/metrics.ts). */
export type IdentityEvent = 'linked' | 'number-changed' | 'recycled-refused' | 'conflict';

export interface InboundHooks {
  /** what a message came to: a login's outcome, or one of the person's commands (HELP, SESSIONS, DELETE) */
  onOutcome?: (outcome: LoginOutcome['outcome'] | CommandResult, job: InboundJob) => void;
  /** `kind`: the identifier kind of a link */
  onIdentity?: (event: IdentityEvent, kind?: string) => void;
  /** a reply not sent: its kind switched off, or its country's daily cap reached */
  onReplyWithheld?: (kind: string, reason: WithheldReason, country: string) => void;
  /** a message that did nothing: its sender past SENDER_MESSAGES_PER_MINUTE (slowed) or from a country not served */
  onSenderRefused?: (reason: 'slowed' | 'country', country: string) => void;
}

/** What an inbound job came to (its BullMQ return value): the login's outcome, or the sender refused before it. */
export type InboundResult = LoginOutcome['outcome'] | CommandResult | 'sender-slowed' | 'country-not-served';

/** What the inbound processor uses of the process's services (services.ts's bag has it). */
export interface InboundServices {
  config: Config;
  log: Logger;
  redis: RedisClient;
  keys: Keys;
  scripts: Scripts;
  queues: Queues;
  tokens: TokenService;
  sessions: Sessions;
  limits: Limits;
  replicas: ReplicaBarrier;
  /** the admin API's directory: an account is indexed when a sign-in makes it (accounts/directory.ts) */
  directory: Pick<Directory, 'index' | 'put'>;
  /** where each outcome is recorded (docs/accounts.md, "The audit trail") */
  audit: AuditTrail;
  /** the person's OpenID logins, which SESSIONS lists beside the app's sessions (services.ts's OidcLogins) */
  oidcLogins: OpenIdLoginList;
  /** erases the account of a confirmed DELETE in the chat (services.ts's Eraser, accounts/erase.ts) */
  eraser: AccountEraser;
}

/** The sender fields an edit may lack and takes from the message it edits. */
type KeptSender = Pick<InboundMessage, 'phone' | 'lid' | 'userId' | 'username' | 'replyTo' | 'displayName'>;

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
 * A sender the gateway did not identify who sends a code learns why nothing happens (never
 * silence). Links made, number changes and refused recycled numbers are logged and counted.
 * Every outcome about a person is an audit event (sign-in, denial, question asked and answered,
 * STOP, identifier changes) with the channel as its client and the registering device's masked
 * network as its IP group; recording never fails the job.
 */
export function inboundProcessor(services: InboundServices, notifier: Notifier, hooks: InboundHooks = {}) {
  const { config, keys, scripts, tokens, sessions, limits, queues, log, redis } = services;
  const logins = new LoginProcessor(scripts, keys, tokens, sessions, {
    graceSeconds: config.verifiedGraceSeconds,
    confirm: config.loginConfirmation,
    stepwise: config.redis.kind === 'cluster',
    messageIdSeconds: config.messageIdSeconds,
  });
  const replies = new ChatReplies(queues, limits, config.replies, config.defaultChannel, { redis, keys, log, onWithheld: hooks.onReplyWithheld });
  const rights = new ChatRights(redis, keys, sessions, services.oidcLogins, services.eraser);

  /** HELP, SESSIONS, DELETE: on the sender's own account only (ChatRights), answered in the chat. */
  const command = async (job: Job<InboundJob>, message: InboundMessage, intent: CommandIntent): Promise<InboundResult> => {
    const meta = { jobId: job.id, channel: message.channel, command: intent.kind };
    const done = await rights.run(identitiesOf(message), intent, message.id, { client: message.channel });
    hooks.onOutcome?.(done.outcome, job.data);
    switch (done.outcome) {
      case 'help':
        await replies.answer(message, { kind: 'help' });
        break;
      case 'no-account':
        log.info('chat command from a sender with no account', meta);
        await replies.answer(message, { kind: 'no-account' });
        break;
      case 'sessions':
        log.info('sessions listed in the chat', { userId: done.userId, sessions: done.devices.length, ...meta });
        await replies.answer(message, { kind: 'sessions', devices: done.devices });
        break;
      case 'erase-asked':
        log.info('account deletion asked in the chat; awaiting its number', { userId: done.userId, ...meta });
        await replies.answer(message, { kind: 'erase-confirm', number: done.number, minutes: done.minutes });
        break;
      case 'erase-refused':
        if (done.blocked) log.warn('chat DELETE of a blocked account refused: an operator erases it', { userId: done.userId, ...meta });
        else log.info('chat DELETE with no deletion waiting for its number: nothing erased', { userId: done.userId, ...meta });
        await replies.answer(message, { kind: 'nothing-to-erase', blocked: done.blocked });
        break;
      case 'erased':
        log.warn("account erased at its owner's request in the chat", { userId: done.userId, ...meta });
        await replies.answer(message, { kind: 'erased' });
        break;
    }
    return done.outcome;
  };

  /** An edit whose event did not name the sender: the sender of the message it edits, if kept. */
  const withSender = async (message: InboundMessage): Promise<InboundMessage> => {
    if (identitiesOf(message).length > 0 || message.editOf === undefined) return message;
    const kept = await redis.get(keys.sender(message.editOf));
    if (kept === null) return message;
    return { ...message, ...(JSON.parse(kept) as KeptSender) };
  };
  const keepSender = (m: InboundMessage): Promise<unknown> => {
    const kept: KeptSender = { phone: m.phone, lid: m.lid, userId: m.userId, username: m.username, replyTo: m.replyTo, displayName: m.displayName };
    return redis.set(keys.sender(m.id), JSON.stringify(kept), 'EX', EDITABLE_SECONDS);
  };
  /** A mistyped code is "not a code" or "no match": kept, so that its correction by edit can sign in. */
  const editable = (message: InboundMessage): boolean => identitiesOf(message).length > 0 && message.editOf === undefined;
  /** Links made, a number replaced, a recycled number refused: logged and counted; the events the trail records of them. */
  const identityChanged = (userId: string, changes: IdentityChanges, meta: Record<string, unknown>): AuditEvent[] => {
    const events: AuditEvent[] = changes.linked.map((kind) => ({ type: 'identity.linked', userId, detail: { kind } }));
    if (changes.numberChanged) events.push({ type: 'identity.number-changed', userId });
    // the new account made instead of opening the previous owner's
    if (changes.recycled) events.push({ type: 'identity.recycled-refused', userId });
    for (const kind of changes.linked) hooks.onIdentity?.('linked', kind);
    if (changes.linked.length > 0) log.info('identifiers linked to an account', { userId, kinds: changes.linked, ...meta });
    if (changes.numberChanged) {
      hooks.onIdentity?.('number-changed');
      log.info('account moved to a new phone number', { userId, ...meta });
    }
    if (changes.recycled) {
      hooks.onIdentity?.('recycled-refused');
      // the number's previous account belongs to another LID / user id: a new account instead
      log.warn("recycled number: the previous owner's account was not opened; a new account was made", { userId, ...meta });
    }
    if (changes.conflict) {
      hooks.onIdentity?.('conflict');
      log.warn('an identifier of the message belongs to another account and was left there', { userId, ...meta });
    }
    return events;
  };

  const senderRules = { budget: config.rateLimits.senderMessagesPerMinute > 0, countries: config.senderCountries };

  const handle = async (job: Job<InboundJob>): Promise<InboundResult> => {
    const message = await withSender(job.data.message);
    const refused = await refuseSender(limits, senderRules, message);
    if (refused !== undefined) {
      hooks.onSenderRefused?.(refused.reason, refused.country);
      const meta = { jobId: job.id, channel: message.channel, country: refused.country };
      if (refused.reason === 'country') {
        log.info('sender from a country not served: nobody signed in', meta);
        await replies.answer(message, { kind: 'country-not-served' });
        return 'country-not-served';
      }
      // told once a window: the window's first message past the budget
      if (refused.tell) {
        log.warn('sender over its message budget: its messages do nothing for the rest of the minute', meta);
        await replies.answer(message, { kind: 'slow-down' });
      }
      return 'sender-slowed';
    }
    const intent = chatIntent(message.text);
    if (message.numberChanged !== true && isCommand(intent)) return command(job, message, intent);
    const result = await logins.process({ ...job.data, message }, intent);
    hooks.onOutcome?.(result.outcome, job.data);
    const meta = { jobId: job.id, channel: message.channel, edit: message.editOf !== undefined || undefined };
    const client = message.channel ?? config.defaultChannel;
    const audit = (...events: AuditEvent[]): Promise<void> => services.audit.note(...events.map((e) => ({ client, ...e })));
    /** the sender's own account (the recycled-number rule), for outcomes that do not name it */
    const sender = (): Promise<string | null> => sessions.accountOfSender(identitiesOf(message)).catch(() => null);
    switch (result.outcome) {
      case 'logged-in': {
        // tokens leave only once their session is on the replicas (REDIS_WAIT_REPLICAS); if not,
        // the job fails and its retry finds the stored login and announces it then
        await services.replicas.sync();
        notifier.loginSucceeded(result.pinHash, result.result);
        const userId = result.result.user.id;
        log.info('login', { pinId: result.pinId, userId, ...meta });
        const { origin } = result;
        const answered = intent.kind === 'yes';
        await audit(
          ...(answered ? [{ type: 'confirmation.answered', userId, ipGroup: origin.ip, detail: { pinId: result.pinId, answer: 'yes' } } as const] : []),
          { type: 'login.succeeded', userId, ipGroup: origin.ip, detail: { pinId: result.pinId, device: origin.device, confirmed: answered } },
          ...identityChanged(userId, result.identity, meta),
        );
        await replies.answer(message, { kind: 'signed-in' });
        // after the person heard: a new account becomes findable (the name is written only when
        // the account is made); idempotent, and a failure is logged, never the login's
        const indexed =
          result.account === null ? undefined : result.account === 'unknown' ? services.directory.index(userId) : services.directory.put(result.account);
        await indexed?.catch((err: unknown) => log.warn('directory: account not indexed', { userId, error: String(err), ...meta }));
        break;
      }
      case 'confirmation-asked': {
        notifier.awaitingConfirmation(result.pinHash, result.pinId);
        log.info('login awaits confirmation in the chat', { pinId: result.pinId, ...meta });
        const userId = await sender();
        await audit({
          type: 'confirmation.asked',
          ...(userId !== null ? { userId } : {}),
          ipGroup: result.origin.ip,
          detail: { pinId: result.pinId, question: result.question, device: result.origin.device },
        });
        const requestedAt = new Date(result.expiresAt - config.pinTtlSeconds * 1000);
        await replies.answer(message, { kind: 'confirm', origin: result.origin, requestedAt, question: result.question });
        break;
      }
      case 'denied': {
        notifier.loginDenied(result.pinHash, result.pinId);
        // possibly a phishing attempt: who asked for it, as far as we may say
        log.warn('login denied in the chat', { pinId: result.pinId, device: result.origin.device, network: result.origin.ip, ...meta });
        const userId = await sender();
        const who = { ...(userId !== null ? { userId } : {}), ipGroup: result.origin.ip };
        await audit({ type: 'confirmation.answered', ...who, detail: { pinId: result.pinId, answer: 'no' } });
        await audit({ type: 'login.denied', ...who, detail: { pinId: result.pinId, reason: 'declined', device: result.origin.device } });
        await replies.answer(message, { kind: 'denied' });
        break;
      }
      case 'blocked':
        // the device hears what a NO gives it (LOGIN_DENIED); the person learns why in the chat
        notifier.loginDenied(result.pinHash, result.pinId);
        log.warn('sign-in refused: the account is blocked', { pinId: result.pinId, userId: result.userId, device: result.origin.device, ...meta });
        await audit({
          type: 'login.denied',
          userId: result.userId,
          ipGroup: result.origin.ip,
          detail: { pinId: result.pinId, reason: 'blocked', device: result.origin.device },
        });
        await replies.answer(message, { kind: 'blocked' });
        break;
      case 'already-done':
        // an earlier attempt logged in and died before its reply was queued (or after: the
        // reply's job id makes this a no-op); the person still hears they are signed in
        if (result.signedIn) await replies.answer(message, { kind: 'signed-in' });
        else log.debug('inbound message skipped', { outcome: result.outcome, ...meta });
        break;
      case 'which-one': {
        // a bare YES / NO with several questions open answers none of them: they are named
        const requestedAt = (expiresAt: number): Date => new Date(expiresAt - config.pinTtlSeconds * 1000);
        await replies.answer(message, {
          kind: 'which-one',
          open: result.open.map((q) => ({ question: q.question, origin: q.origin, requestedAt: requestedAt(q.expiresAt) })),
        });
        break;
      }
      case 'unanswered':
        await replies.answer(message, { kind: 'nothing-to-confirm' });
        break;
      case 'signed-out':
        log.warn('signed out everywhere from the chat', { sessions: result.sessions, ...meta });
        // a STOP from someone without an account ended nothing of anyone's: not recorded
        if (result.userId !== null) await audit({ type: 'chat.stop', userId: result.userId, detail: { sessions: result.sessions } });
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
      case 'number-changed':
        if (result.conflict) {
          hooks.onIdentity?.('conflict');
          log.warn("identifier change naming another account's identifiers: nothing moved", meta);
        } else if (result.changed) {
          hooks.onIdentity?.('number-changed');
          log.info('account moved to a new phone number', { userId: result.userId, ...meta });
          await audit({ type: 'identity.number-changed', userId: result.userId });
        } else log.info('number change of nobody we know, or already made', meta);
        break;
      case 'no-identity':
        if (message.text !== null && emojiFromChat(message.text) !== null) {
          // never silence: the person learns why nothing happens
          log.info('unidentified sender answered', meta);
          await replies.answer(message, { kind: 'cannot-sign-in' });
        } else log.warn('inbound message without an identifier of its sender', { ...meta, provider: message.provider });
        break;
      default:
        log.debug('inbound message skipped', { outcome: result.outcome, ...meta });
    }
    return result.outcome;
  };

  return async (job: Job<InboundJob>): Promise<InboundResult> => {
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
export async function endFailedLogin(
  services: Pick<InboundServices, 'keys' | 'scripts' | 'config' | 'log'> & Partial<Pick<InboundServices, 'audit'>>,
  notifier: Pick<Notifier, 'loginFailed'>,
  job: InboundJob,
): Promise<boolean> {
  const { keys, scripts, config, log } = services;
  // the message's record names the claim (fail-lookup.lua): on a cluster it, the registration
  // and the user's session are three slots; the registration is marked first, and a retry after
  // a crash finds it failed by this message and still closes the session it names
  const pinHash = await scripts.run('fail-lookup', [keys.message(job.message.id)], [job.nonce]);
  if (pinHash === null) return false;
  const failed = await scripts.run('fail-registration', [keys.registration(pinHash)], [job.message.id, config.expiredMemorySeconds * 1000]);
  if (failed.kind === 'none') return false;
  const { pinId, sessionId, userId, first } = failed;
  if (sessionId !== '' && userId !== '') await closeSession(scripts, keys, userId, sessionId);
  // ended before (this is a retry): the session is closed now, nothing else to tell
  if (!first) return false;
  notifier.loginFailed(pinHash, pinId);
  log.warn('login failed for good; the client is told to start again', { pinId });
  await services.audit?.note({
    type: 'login.failed',
    ...(userId !== '' ? { userId } : {}),
    client: job.message.channel ?? config.defaultChannel,
    detail: { pinId },
  });
  return true;
}
