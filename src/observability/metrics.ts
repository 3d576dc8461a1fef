import client from 'prom-client';
import type { AuditSink } from '../accounts/audit.js';
import type { IgnoreReason } from '../messaging/inbound.js';
import type { IdentityEvent, InboundHooks } from '../queues/workers/inbound.js';
import type { ProbeSink } from '../security/probes.js';

/**
 * The Prometheus metrics each process records where the thing happens. Web and worker are
 * separate processes (separate dynos on Heroku), so every process publishes a snapshot of its
 * registry into Redis (see snapshots.ts) and a web node's `/metrics` reports all of them, each
 * series labelled with the `node` that recorded it. Label values are all bounded: route
 * templates, status codes, queue names, the closed sets of outcomes and ignore reasons.
 */

const PREFIX = 'pinauth_';

/** A label value a gateway chose (a pricing category): kept when it looks like one, else `other`, so the series stay bounded. */
const word = (v: string): string => (/^[a-z_]{1,32}$/.test(v) ? v : 'other');
/** A channel's gateway and number (`cloud:<phone_number_id>`, `evolution:<instance>`) as labels. */
const channelLabels = (channel: string): { gateway: string; number: string } => {
  const colon = channel.indexOf(':');
  return colon === -1 ? { gateway: channel, number: '' } : { gateway: channel.slice(0, colon), number: channel.slice(colon + 1) };
};

/** Where a request went, as a bounded label: the route template, never the raw URL. */
export type RouteLabel = string;

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'OTHER';
}

/** Metrics of the web role: HTTP, webhook door, sockets, probing (wrong guesses, collisions, refusals). */
export interface WebMetrics extends ProbeSink {
  requestDone(method: string, route: RouteLabel, status: number, seconds: number): void;
  webhookRejected(): void;
  /** a webhook refused for what it would cost before it is authenticated (429, or 413 past the drain limit) */
  webhookRefused(reason: string): void;
  webhookIgnored(reason: IgnoreReason): void;
  /** a body dropped unread and answered 200 (over the limit) */
  webhookDropped(reason: string): void;
  /** a gateway's status update of one of our messages, and whether it matched a record */
  deliveryStatus(gateway: string, status: string, result: string): void;
  /** a message the gateway priced (Cloud API status `pricing`), once per message, by reply kind, channel and recipient country */
  replyPriced(kind: string, channel: string, country: string, pricing: { billable: boolean; category: string; model: string }): void;
  /** a chat message accepted on a channel (in) */
  channelMessage(channel: string, direction: 'in' | 'out'): void;
  /** the live socket count of this node, read at each snapshot */
  setSocketSource(count: () => number): void;
}

/** Metrics of the worker role: jobs, logins, expiries. */
export interface WorkerMetrics {
  jobFinished(queue: string, result: 'completed' | 'failed'): void;
  /** a login's outcome, or one of the person's chat commands (HELP, SESSIONS, DELETE) */
  inboundOutcome(outcome: Parameters<NonNullable<InboundHooks['onOutcome']>>[0], receivedAt: number): void;
  pinExpired(): void;
  /** an outbound message the gateway took (sent) or refused for good (failed) */
  outboundResult(gateway: string, result: 'sent' | 'failed'): void;
  /** an outbound message the gateway took on a channel (out) */
  channelMessage(channel: string, direction: 'in' | 'out'): void;
  /** a chat reply the gateway took, by kind, gateway, number and recipient country */
  replySent(kind: string, gateway: string, number: string, country: string): void;
  /** a chat reply not sent: its kind switched off (policy) or its country's daily cap reached (daily-cap) */
  replyWithheld(kind: string, reason: string, country: string): void;
  /** an inbound job that failed for good (waits for `npm run replay-inbound`) */
  inboundFailed(): void;
  /** a chat message that did nothing: its sender over SENDER_MESSAGES_PER_MINUTE (slowed) or from a country not served (country) */
  senderRefused(reason: string, country: string): void;
  /** an account's identifiers changed: a link made (of `kind`), a number moved, a recycled number refused, a conflict */
  identityEvent(event: IdentityEvent, kind?: string): void;
}

export interface ProcessMetrics {
  registry: client.Registry;
  web: WebMetrics;
  worker: WorkerMetrics;
  /** audit events recorded and lost, by type (every role records some; AuditTrail.attach) */
  audit: AuditSink;
  /** REDIS_WAIT_REPLICAS barriers passed with fewer replicas connected than asked, read at each snapshot */
  setReplicaDegradedSource(count: () => number): void;
}

/** Seconds from the webhook's 200 to the login: queue wait plus processing. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * One registry per process with the metrics of its roles (`all` has both) and Node's default
 * process metrics. Metrics of a role the process doesn't run are never registered, so a
 * worker's snapshot holds no empty HTTP series.
 */
export function createProcessMetrics(roles: { web: boolean; worker: boolean }): ProcessMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const registers = (on: boolean): client.Registry[] => (on ? [registry] : []);
  const webRegs = registers(roles.web);
  const workerRegs = registers(roles.worker);

  const httpDuration = new client.Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'HTTP request duration by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: webRegs,
  });
  const rejected = new client.Counter({
    name: `${PREFIX}webhook_rejected_total`,
    help: 'Webhook requests rejected for a missing or invalid signature or token',
    registers: webRegs,
  });
  const refused = new client.Counter({
    name: `${PREFIX}webhook_refused_total`,
    help: 'Webhook requests refused before authentication for what they would cost, by reason (concurrency, unverified-bytes, too-large)',
    labelNames: ['reason'] as const,
    registers: webRegs,
  });
  const ignored = new client.Counter({
    name: `${PREFIX}webhook_ignored_events_total`,
    help: 'Webhook events accepted but ignored, by reason',
    labelNames: ['reason'] as const,
    registers: webRegs,
  });
  const dropped = new client.Counter({
    name: `${PREFIX}webhook_dropped_total`,
    help: 'Webhook bodies dropped unread and answered 200 so the gateway does not retry them, by reason',
    labelNames: ['reason'] as const,
    registers: webRegs,
  });
  const statuses = new client.Counter({
    name: `${PREFIX}delivery_status_updates_total`,
    help:
      "Gateways' status updates of our messages (sent, delivered, read, failed), by gateway, status and whether they matched a tracked message (updated, " +
      'stale, unknown)',
    labelNames: ['gateway', 'status', 'result'] as const,
    registers: webRegs,
  });
  const priced = new client.Counter({
    name: `${PREFIX}replies_priced_total`,
    help:
      "Messages the gateway priced (Cloud API status webhooks' pricing), once each, by reply kind, gateway, number, recipient country, " +
      "pricing category and model, and whether billable: billable × the country's rate is what replies cost",
    labelNames: ['kind', 'gateway', 'number', 'country', 'category', 'pricing_model', 'billable'] as const,
    registers: webRegs,
  });
  const channelMessages = new client.Counter({
    name: `${PREFIX}channel_messages_total`,
    help: 'Chat messages by gateway, number (phone number id or instance) and direction: in (accepted at the webhook), out (taken by the gateway)',
    labelNames: ['gateway', 'number', 'direction'] as const,
    registers: registers(roles.web || roles.worker),
  });
  const channelMessage = (channel: string, direction: 'in' | 'out'): void => channelMessages.inc({ ...channelLabels(channel), direction });
  // Probing, by bounded labels only (action, kind, budget name); the IP group is in the warn logs.
  const wrongGuesses = new client.Counter({
    name: `${PREFIX}wrong_guesses_total`,
    help: 'PINs named that no registration holds (check-login or cancel-auth answering PIN_NOT_FOUND), by action',
    labelNames: ['action'] as const,
    registers: webRegs,
  });
  const collisions = new client.Counter({
    name: `${PREFIX}registration_collisions_total`,
    help: 'Registrations naming a PIN (answered with a decoy) or an emoji string (now contested) another registration holds',
    labelNames: ['kind'] as const,
    registers: webRegs,
  });
  const rateLimited = new client.Counter({
    name: `${PREFIX}rate_limited_total`,
    help: 'Requests refused by a login budget, by budget',
    labelNames: ['limit'] as const,
    registers: webRegs,
  });
  const socketsRefused = new client.Counter({
    name: `${PREFIX}socket_handshakes_refused_total`,
    help: 'Socket.IO handshakes refused: from a foreign origin, or over SOCKETS_PER_IP',
    labelNames: ['reason'] as const,
    registers: webRegs,
  });
  let socketCount: () => number = () => 0;
  new client.Gauge({
    name: `${PREFIX}socket_connections`,
    help: 'Socket.IO connections open on this node',
    registers: webRegs,
    collect() {
      this.set(socketCount());
    },
  });

  const jobs = new client.Counter({
    name: `${PREFIX}jobs_total`,
    help: 'Job attempts finished, by queue and result (a retried job counts once per failed attempt)',
    labelNames: ['queue', 'result'] as const,
    registers: workerRegs,
  });
  const inbound = new client.Counter({
    name: `${PREFIX}inbound_messages_total`,
    help: 'Inbound chat messages processed, by outcome',
    labelNames: ['outcome'] as const,
    registers: workerRegs,
  });
  const logins = new client.Counter({
    name: `${PREFIX}logins_total`,
    help: 'Successful PIN logins',
    registers: workerRegs,
  });
  const denied = new client.Counter({
    name: `${PREFIX}logins_denied_total`,
    help: 'Sign-ins the person refused in the chat (answered NO to the confirmation): possible phishing',
    registers: workerRegs,
  });
  const loginLatency = new client.Histogram({
    name: `${PREFIX}webhook_to_login_seconds`,
    help: 'Time from accepting the webhook to completing the login',
    buckets: LATENCY_BUCKETS,
    registers: workerRegs,
  });
  const outbound = new client.Counter({
    name: `${PREFIX}outbound_messages_total`,
    help: 'Outbound messages the gateway took (sent) or that failed for good, by gateway',
    labelNames: ['gateway', 'result'] as const,
    registers: workerRegs,
  });
  const repliesSent = new client.Counter({
    name: `${PREFIX}replies_sent_total`,
    help:
      'Chat replies the gateway took, by kind, gateway, number (phone number id or instance) and recipient country (unknown when the phone was withheld): ' +
      'on a gateway that reports no pricing (Evolution), what replies cost is counted from these',
    labelNames: ['kind', 'gateway', 'number', 'country'] as const,
    registers: workerRegs,
  });
  const repliesWithheld = new client.Counter({
    name: `${PREFIX}replies_withheld_total`,
    help:
      'Chat replies not sent, by kind, reason (policy: the kind is off in CHAT_REPLY_KINDS; ' +
      'daily-cap: REPLY_DAILY_CAP_PER_COUNTRY reached for the country today, UTC) and recipient country; the login went on',
    labelNames: ['kind', 'reason', 'country'] as const,
    registers: workerRegs,
  });
  const inboundFailed = new client.Counter({
    name: `${PREFIX}inbound_failed_total`,
    help:
      'Inbound chat messages whose job failed for good (a fault other than Redis, past its attempts, or stalled too often): ' +
      'no login, no reply until replayed with npm run replay-inbound',
    registers: workerRegs,
  });
  let replicaDegraded: () => number = () => 0;
  new client.Counter({
    name: `${PREFIX}replica_wait_degraded_total`,
    help: 'REDIS_WAIT_REPLICAS barriers passed with fewer replicas connected than asked (waited for the connected ones only)',
    registers: [registry],
    collect() {
      this.reset();
      const n = replicaDegraded();
      if (n > 0) this.inc(n);
    },
  });
  const identityLinks = new client.Counter({
    name: `${PREFIX}identity_links_total`,
    help: 'Identifiers newly linked to an account, by kind (phone, lid, bsuid)',
    labelNames: ['kind'] as const,
    registers: workerRegs,
  });
  const identityEvents = new client.Counter({
    name: `${PREFIX}identity_events_total`,
    help:
      "Accounts moved to a new number or BSUID (number-changed), recycled numbers that did not open the previous owner's account (recycled-refused), " +
      'identifiers left on another account and identifier changes that moved nothing for it (conflict)',
    labelNames: ['event'] as const,
    registers: workerRegs,
  });
  const sendersRefused = new client.Counter({
    name: `${PREFIX}sender_refused_total`,
    help:
      'Chat messages that did nothing, by reason: the sender over SENDER_MESSAGES_PER_MINUTE (slowed), ' +
      "or from a country SENDER_COUNTRIES_ALLOW / _DENY refuses (country); by the sender's country",
    labelNames: ['reason', 'country'] as const,
    registers: workerRegs,
  });
  const expiries = new client.Counter({
    name: `${PREFIX}pin_expiries_total`,
    help: 'Registrations that expired without a login',
    registers: workerRegs,
  });

  const auditEvents = new client.Counter({
    name: `${PREFIX}audit_events_total`,
    help: 'Events recorded in the audit trail, by type (docs/accounts.md, "The audit trail")',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const auditFailures = new client.Counter({
    name: `${PREFIX}audit_failures_total`,
    help: 'Audit events that could not be recorded (Redis refused or was unreachable), by type; the action they describe went on',
    labelNames: ['type'] as const,
    registers: [registry],
  });

  return {
    registry,
    audit: {
      recorded: (type) => auditEvents.inc({ type }),
      failed: (type) => auditFailures.inc({ type }),
    },
    web: {
      requestDone: (method, route, status, seconds) => httpDuration.observe({ method: methodLabel(method), route, status: String(status) }, seconds),
      webhookRejected: () => rejected.inc(),
      webhookRefused: (reason) => refused.inc({ reason }),
      webhookIgnored: (reason) => ignored.inc({ reason }),
      webhookDropped: (reason) => dropped.inc({ reason }),
      deliveryStatus: (gateway, status, result) => statuses.inc({ gateway, status, result }),
      channelMessage,
      replyPriced: (kind, channel, country, pricing) =>
        priced.inc({
          kind,
          ...channelLabels(channel),
          country,
          category: word(pricing.category),
          pricing_model: word(pricing.model.toLowerCase()),
          billable: String(pricing.billable),
        }),
      wrongGuess: (action) => wrongGuesses.inc({ action }),
      collision: (kind) => collisions.inc({ kind }),
      rateLimited: (limit) => rateLimited.inc({ limit }),
      socketRefused: (reason) => socketsRefused.inc({ reason }),
      setSocketSource: (count) => {
        socketCount = count;
      },
    },
    worker: {
      jobFinished: (queue, result) => jobs.inc({ queue, result }),
      inboundOutcome: (outcome, receivedAt) => {
        inbound.inc({ outcome });
        if (outcome === 'denied') denied.inc();
        if (outcome !== 'logged-in') return;
        logins.inc();
        loginLatency.observe(Math.max(0, Date.now() - receivedAt) / 1000);
      },
      pinExpired: () => expiries.inc(),
      outboundResult: (gateway, result) => outbound.inc({ gateway, result }),
      channelMessage,
      replySent: (kind, gateway, number, country) => repliesSent.inc({ kind, gateway, number, country }),
      replyWithheld: (kind, reason, country) => repliesWithheld.inc({ kind, reason, country }),
      inboundFailed: () => inboundFailed.inc(),
      senderRefused: (reason, country) => sendersRefused.inc({ reason, country }),
      identityEvent: (event, kind) => {
        if (event === 'linked') identityLinks.inc({ kind: kind ?? 'unknown' });
        else identityEvents.inc({ event });
      },
    },
    setReplicaDegradedSource: (count) => {
      replicaDegraded = count;
    },
  };
}
