import { randomBytes } from 'node:crypto';
import type { InboundJob, InboundMessage } from './jobs.js';
import type { Queues } from './queues.js';

/**
 * Where an accepted webhook message enters the service: one job on the `inbound` queue of its
 * id's partition (queues/partitions.ts), added by the web node that accepted it. The job id is
 * the message's (`inboundJobId`), so a gateway's repeat delivery is the same job: BullMQ keeps a
 * job once per id. `add` settles once the job is in Redis (and on REDIS_WAIT_REPLICAS replicas):
 * the webhook answers 200 then, and 503 when it rejects (the gateway sends the message again).
 */
export interface Intake {
  add(message: InboundMessage, receivedAt: number): Promise<void>;
}

/** The `inbound` job id of a message: a repeat delivery maps to the same job, which BullMQ keeps once. */
export const inboundJobId = (messageId: string): string => `m${messageId}`;

/**
 * Unique per accepted message (tells a retry of its job from a second delivery): a random
 * process id and a counter.
 */
const PROCESS_NONCE = randomBytes(9).toString('base64url');
let counter = 0;
const nextNonce = (): string => PROCESS_NONCE + (++counter).toString(36);

/** `durable`: resolves once the writes so far are on the replicas the deployment waits for (services.ts `replicas.sync`). */
export function createIntake(queues: Pick<Queues, 'inboundFor'>, durable: () => Promise<void>): Intake {
  return {
    async add(message, receivedAt) {
      const job: InboundJob = { message, nonce: nextNonce(), receivedAt };
      await queues.inboundFor(message.id).add('message', job, { jobId: inboundJobId(message.id) });
      await durable();
    },
  };
}
