import { startStack, type Stack } from '../helpers/processes.js';

/**
 * One stack of real web and worker processes for a describe block, started before its tests and
 * always stopped after. The socket event budget is the production default (20 a second), so
 * throttling is real; the other limits stay relaxed.
 */
export function useStack(opts: { name: string; webs: number; workers?: number; env?: Record<string, string> }): () => Stack {
  let stack: Stack | undefined;
  before(async function () {
    this.timeout(40000);
    stack = await startStack({
      name: opts.name,
      webs: opts.webs,
      workers: opts.workers ?? 1,
      env: { RATE_SOCKET_EVENTS_PER_SECOND: '20', ...(opts.env ?? {}) },
    });
  });
  after(async function () {
    this.timeout(40000);
    await stack?.stop();
  });
  return () => {
    if (!stack) throw new Error('stack not started');
    return stack;
  };
}
