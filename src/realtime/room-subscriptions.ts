import type { Cluster } from 'ioredis';

type Send = (...args: unknown[]) => Promise<unknown>;

/**
 * The sharded Socket.IO adapter (createShardedAdapter, dynamic mode) sends SSUBSCRIBE when a
 * room is created and SUNSUBSCRIBE when it empties, through the subscriber client we hand it, and
 * does not await either. During a cluster failover those commands fail (`Too many Cluster
 * redirections`, `Connection is closed`) and each was an unhandled rejection of the web process.
 * This observes the promise of both commands on that client (their public methods; the adapter
 * still gets the same promise), so a failure is reported to `onFailure` and handled.
 */
export function observeRoomSubscriptions(sub: Cluster, onFailure: (command: string, err: unknown) => void): void {
  for (const command of ['ssubscribe', 'sunsubscribe'] as const) {
    const send = (sub[command] as Send).bind(sub);
    const observed: Send = (...args) => {
      const sent = send(...args);
      sent.catch((err: unknown) => onFailure(command.toUpperCase(), err));
      return sent;
    };
    Object.assign(sub, { [command]: observed });
  }
}
