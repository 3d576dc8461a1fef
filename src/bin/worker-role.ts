import { SYSTEM } from '../accounts/actor.js';
import { RESUME_AFTER_MS, RESUME_EVERY_MS } from '../accounts/erase.js';
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
  // erases a fault cut off (docs/accounts.md, "Erase"): finished here, whoever began them
  const resume = setInterval(() => {
    b.services.eraser.resume(SYSTEM, RESUME_AFTER_MS).then(
      (done) => {
        for (const r of done) b.log.warn('unfinished erase finished', { receipt: r.id });
      },
      (err: Error) => b.log.warn('unfinished erases could not be finished yet', { error: err.message }),
    );
  }, RESUME_EVERY_MS);
  resume.unref();
  return {
    host,
    async stop() {
      clearInterval(resume);
      await host.close(b.config.shutdownTimeoutMs);
    },
  };
}
