import { startWorkers, type WorkerHost } from '../queues/worker-host.js';
import type { Bootstrapped } from './bootstrap.js';

export interface WorkerRole {
  host: WorkerHost;
  stop(): Promise<void>;
}

/** The worker role: BullMQ workers of every queue, feeding the worker metrics. */
export function startWorker(b: Bootstrapped): WorkerRole {
  const m = b.metrics.worker;
  const host = startWorkers(b.services, {
    onOutcome: (outcome, job) => m.inboundOutcome(outcome, job.receivedAt),
    onIdentity: (event, kind) => m.identityEvent(event, kind),
    onExpired: () => m.pinExpired(),
    onJobFinished: (queue, result) => m.jobFinished(queue, result),
    onOutboundResult: (gateway, result, channel) => {
      m.outboundResult(gateway, result);
      if (result === 'sent') m.channelMessage(channel, 'out');
    },
    onInboundFailed: () => m.inboundFailed(),
    onReplySent: (kind, gateway, number, country) => m.replySent(kind, gateway, number, country),
    onReplyWithheld: (kind, reason, country) => m.replyWithheld(kind, reason, country),
    onSenderRefused: (reason, country) => m.senderRefused(reason, country),
  });
  b.log.info('workers started', { queues: host.workers.map((w) => w.name) });
  return {
    host,
    async stop() {
      await host.close(b.config.shutdownTimeoutMs);
    },
  };
}
