import { startStack, type InProcessNode, type ServiceNode, type ServiceProcess, type Stack } from '../helpers/processes.js';

interface UseStackOptions {
  name: string;
  webs: number;
  workers?: number;
  env?: Record<string, string>;
  /** nodes in the test's own process instead of child processes (see startStack) */
  inProcess?: boolean;
}

/**
 * One stack of real web and worker processes (or, with `inProcess`, nodes in the test's own
 * process) for a describe block, started before its tests and always stopped after. The socket
 * event budget is the production default (20 a second), so throttling is real; the other limits
 * stay relaxed.
 */
export function useStack(opts: UseStackOptions & { inProcess: true }): () => Stack<InProcessNode>;
export function useStack(opts: UseStackOptions & { inProcess?: false }): () => Stack<ServiceProcess>;
export function useStack(opts: UseStackOptions): () => Stack<ServiceNode> {
  let stack: Stack<ServiceNode> | undefined;
  before(async function () {
    this.timeout(40000);
    const options = {
      name: opts.name,
      webs: opts.webs,
      workers: opts.workers ?? 1,
      env: { RATE_SOCKET_EVENTS_PER_SECOND: '20', ...(opts.env ?? {}) },
    };
    stack = opts.inProcess ? await startStack({ ...options, inProcess: true }) : await startStack({ ...options, inProcess: false });
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
