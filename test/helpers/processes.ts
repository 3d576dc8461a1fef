import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startInProcess, type InProcessNode, type ServiceNode } from './in-process.js';
import { captureOutput } from './output.js';
import { cleanPrefix, REDIS_URL, uniquePrefix } from './redis.js';

export type { InProcessNode, ServiceNode } from './in-process.js';

/** The repository root (tests run from dist/test/helpers). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** What a finished child process printed, and how it ended. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <args>` from the repository root with only `env` (PATH added) and waits for it to end.
 * `interruptWhen`: sends SIGINT once, as Ctrl-C would, when what it printed on stderr matches.
 */
export async function runNode(args: string[], env: Record<string, string>, opts: { interruptWhen?: RegExp } = {}): Promise<Finished> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let interrupted = false;
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
    if (!interrupted && opts.interruptWhen?.test(stderr)) {
      interrupted = true;
      child.kill('SIGINT');
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

/** The Procfile's command for a role, so tests start processes exactly as a dyno would. */
export function procfileCommand(role: 'web' | 'worker'): string[] {
  const line = readFileSync(path.join(ROOT, 'Procfile'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${role}:`));
  if (!line) throw new Error(`Procfile has no ${role}: line`);
  return line
    .slice(role.length + 1)
    .trim()
    .split(/\s+/);
}

/**
 * The lowest port the kernel hands out for outgoing connections (Linux; elsewhere none known).
 * A port below it is never taken by a connection between freePort's check and the bind.
 */
function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : undefined;
  } catch {
    return undefined;
  }
}
const LISTEN_RANGE = ((low) => (low !== undefined && low > 12000 ? { from: 10000, to: low - 1 } : undefined))(ephemeralLow());

function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : null));
    });
  });
}

/**
 * A port free on 127.0.0.1 now: below the ephemeral range where there is one, else the system's
 * choice. With `clusterBus`, port + 10,000 (a Redis Cluster node's bus port) is below that range
 * and free too.
 */
export async function freePort(opts: { clusterBus?: boolean } = {}): Promise<number> {
  const bus = opts.clusterBus ? 10000 : 0;
  const range = LISTEN_RANGE && LISTEN_RANGE.to - bus > LISTEN_RANGE.from + 2000 ? { from: LISTEN_RANGE.from, to: LISTEN_RANGE.to - bus } : undefined;
  for (let i = 0; range && i < 50; i++) {
    const port = await tryListen(range.from + Math.floor(Math.random() * (range.to - range.from + 1)));
    if (port !== null && (bus === 0 || (await tryListen(port + bus)) !== null)) return port;
  }
  for (let i = 0; i < 50; i++) {
    const port = await tryListen(0);
    if (port !== null && (bus === 0 || (port + bus < 65536 && (await tryListen(port + bus)) !== null))) return port;
  }
  throw new Error('no free port on 127.0.0.1');
}

/** A node in a child process of its own, started as a dyno would start it. */
export interface ServiceProcess extends ServiceNode {
  child: ChildProcess;
  /** resolves with the exit code once the process has exited */
  exited: Promise<number | null>;
}

/** How often a web node is started again on a new port when the one freePort chose was taken meanwhile. */
const PORT_ATTEMPTS = 3;

export async function startProcess(role: 'web' | 'worker' | 'all', env: Record<string, string>): Promise<ServiceProcess> {
  // a given PORT is kept (a URL that names it, e.g. OIDC_ISSUER, had to be known before the start)
  if (role === 'worker' || env.PORT) return startOnPort(role, env, role === 'worker' ? 0 : Number(env.PORT));
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(role, env, await freePort());
    } catch (err) {
      // freePort's port is free when it answers, not when the child binds it: another suite
      // beside this one (or, with no ephemeral range known, an outgoing connection) can take it
      if (attempt >= PORT_ATTEMPTS || !(err instanceof Error && err.message.includes('EADDRINUSE'))) throw err;
    }
  }
}

async function startOnPort(role: 'web' | 'worker' | 'all', env: Record<string, string>, port: number): Promise<ServiceProcess> {
  const [cmd, ...args] = role === 'all' ? ['node', 'dist/src/bin/all.js'] : procfileCommand(role);
  const child = spawn(cmd!, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      REDIS_URL,
      LOG_LEVEL: 'info',
      // the suites were written when every reply went out; the reply policy's own tests set it
      CHAT_REPLY_KINDS: 'all',
      PORT: String(port),
      INSTANCE_NAME: `${role}-${port || randomBytes(3).toString('hex')}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = captureOutput();
  const onData = (b: Buffer): void => out.append(b.toString('utf8'));
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const proc: ServiceProcess = {
    role,
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => out.text(),
    exited,
    // generous: on a loaded 2-core machine a node process can take 20 s and more to start
    waitForOutput: (pattern, timeoutMs = 60000) => out.waitFor(pattern, timeoutMs, role, exited),
  };
  try {
    await proc.waitForOutput(role === 'worker' ? /workers started/ : /web listening/);
  } catch (err) {
    // never leave a half-started process behind: the caller has no handle to stop it
    child.kill('SIGKILL');
    throw err;
  }
  return proc;
}

export async function stopProcess(p: ServiceProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30000): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
  p.child.kill(signal);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
  const code = await p.exited;
  clearTimeout(timer);
  return code;
}

/**
 * Some web nodes and workers sharing one KEY_PREFIX, as a deployment would run: child processes
 * (ServiceProcess), or with `inProcess` nodes composed in the test's own process (InProcessNode).
 */
export interface Stack<N extends ServiceNode = ServiceProcess> {
  prefix: string;
  env: Record<string, string>;
  webs: N[];
  workers: N[];
  url: string;
  addWorker(extraEnv?: Record<string, string>): Promise<N>;
  addWeb(extraEnv?: Record<string, string>): Promise<N>;
  /**
   * Stops every node and deletes the prefix's keys. Processes get `signal` (SIGTERM: a graceful
   * shutdown; SIGKILL for a stack whose Redis a test took away, when its shutdown is not the
   * subject: a graceful one then waits out SHUTDOWN_TIMEOUT_MS, 25 s). In-process nodes always
   * shut down gracefully (there is no process to kill).
   */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Generous limits so tests that are not about rate limiting never hit them. */
export const RELAXED_LIMITS: Record<string, string> = {
  RATE_REGISTER_PER_MINUTE: '100000',
  RATE_CHECK_PER_MINUTE: '100000',
  RATE_CHECK_PIN_PER_SECOND: '1000',
  RATE_CHECK_PIN_BURST: '1000',
  RATE_UNKNOWN_PIN_PER_10_MINUTES: '100000',
  RATE_SEND_PER_MINUTE: '100000',
  RATE_REPLY_PER_MINUTE: '100000',
  SENDER_MESSAGES_PER_MINUTE: '100000',
  RATE_SOCKET_EVENTS_PER_SECOND: '100000',
  RATE_ADMIN_FAILURES_PER_15_MINUTES: '100000',
  RATE_ADMIN_ACTIONS_PER_MINUTE: '100000',
  RATE_OIDC_AUTHORIZE_PER_MINUTE: '100000',
  RATE_OIDC_INTERACTION_PER_MINUTE: '100000',
  WEBHOOK_IN_FLIGHT_PER_IP: '100000',
};

export interface StackOptions {
  name: string;
  webs?: number;
  workers?: number;
  env?: Record<string, string>;
  /** keep the service's own rate limits (production defaults) instead of RELAXED_LIMITS */
  defaultLimits?: boolean;
  /**
   * every node in this process (its own config, logger and services, on a port the system
   * picks): for tests of the HTTP and socket behaviour, not of processes (signals, exit codes,
   * stdout of the binaries, start-up environment)
   */
  inProcess?: boolean;
}

export async function startStack(opts: StackOptions & { inProcess: true }): Promise<Stack<InProcessNode>>;
export async function startStack(opts: StackOptions & { inProcess?: false }): Promise<Stack<ServiceProcess>>;
export async function startStack(opts: StackOptions): Promise<Stack<InProcessNode> | Stack<ServiceProcess>> {
  if (opts.inProcess)
    return makeStack<InProcessNode>(
      opts,
      (role, env) => startInProcess(role, env),
      (n) => n.stop(),
    );
  return makeStack<ServiceProcess>(
    opts,
    (role, env) => startProcess(role, env),
    (p, signal) => stopProcess(p, signal),
  );
}

async function makeStack<N extends ServiceNode>(
  opts: StackOptions,
  start: (role: 'web' | 'worker', env: Record<string, string>) => Promise<N>,
  stopNode: (node: N, signal: NodeJS.Signals) => Promise<unknown>,
): Promise<Stack<N>> {
  const prefix = uniquePrefix(opts.name);
  const env = { KEY_PREFIX: prefix, ...(opts.defaultLimits ? {} : RELAXED_LIMITS), ...(opts.env ?? {}) };
  const stack: Stack<N> = {
    prefix,
    env,
    webs: [],
    workers: [],
    get url() {
      return stack.webs[0]!.url;
    },
    async addWorker(extraEnv = {}) {
      const w = await start('worker', { ...env, ...extraEnv });
      stack.workers.push(w);
      return w;
    },
    async addWeb(extraEnv = {}) {
      const w = await start('web', { ...env, ...extraEnv });
      stack.webs.push(w);
      return w;
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      // every node is stopped and the keys go even when one stop fails (its error is still the caller's)
      const stopped = await Promise.allSettled([...stack.webs, ...stack.workers].map((n) => stopNode(n, signal)));
      await cleanPrefix(prefix);
      const failed = stopped.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
  // Wait for every start to settle, so a failure never leaves a node still starting behind.
  const started = await Promise.allSettled([
    ...Array.from({ length: opts.webs ?? 1 }, () => stack.addWeb()),
    ...Array.from({ length: opts.workers ?? 1 }, () => stack.addWorker()),
  ]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stack.stop();
    throw failed.reason;
  }
  return stack;
}

/** A stack whose nodes run in the test's own process (startStack with `inProcess: true`). */
export type InProcessStack = Stack<InProcessNode>;
