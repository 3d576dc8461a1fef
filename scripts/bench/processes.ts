import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './stats.js';

// one way to find a free loopback port, shared with the test harness
export { freePort } from '../../test/helpers/processes.js';

/**
 * Process control: start the service's built entry points (and the baseline server) as child
 * processes, wait until they serve, read their resident memory, stop them gracefully.
 */

/** The repository root (this file runs from dist/scripts/bench). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Child {
  name: string;
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** the last output lines, for error messages */
  tail(): string;
  exited: Promise<number | null>;
}

/** Spawns `node <nodeArgs> <script>` from the repository root with exactly `env` (plus PATH). */
export function spawnNode(name: string, script: string, env: Record<string, string>, nodeArgs: string[] = [], port = 0): Child {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (b: Buffer): void => {
    out = (out + b.toString('utf8')).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { name, child, pid: child.pid ?? 0, port, url: `http://127.0.0.1:${port}`, tail: () => out, exited };
}

/** The Procfile's node flags and script for a role, so the benchmark starts processes as a dyno would. */
export function procfileScript(role: 'web' | 'worker'): { nodeArgs: string[]; script: string } {
  const line = readFileSync(path.join(ROOT, 'Procfile'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${role}:`));
  const parts =
    line
      ?.slice(role.length + 1)
      .trim()
      .split(/\s+/) ?? [];
  const scriptAt = parts.findIndex((part) => part.endsWith('.js'));
  if (scriptAt === -1) throw new Error(`Procfile has no node script for ${role}`);
  return { nodeArgs: parts.slice(1, scriptAt), script: parts[scriptAt]! };
}

/** Polls `ready` until it resolves true; fails with the child's output when it exits or times out. */
export async function waitUntil(c: Child, ready: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void c.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${c.name} exited while starting:\n${c.tail()}`);
    if (await ready().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${c.name} not ready after ${timeoutMs} ms:\n${c.tail()}`);
}

/** True once GET `url` answers 200. */
export async function answers(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the process is gone. */
export async function stopChild(c: Child, timeoutMs = 15_000): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return;
  c.child.kill('SIGTERM');
  const timer = setTimeout(() => c.child.kill('SIGKILL'), timeoutMs);
  await c.exited;
  clearTimeout(timer);
}

/** Resident set size in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name (which may hold spaces) start at state; utime and stime are 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Runs `fn` and adds the CPU time `pid` used meanwhile to `into.ms`. */
export async function metered<T>(pid: number, into: { ms: number }, fn: () => Promise<T>): Promise<T> {
  const before = cpuMs(pid);
  try {
    return await fn();
  } finally {
    into.ms += cpuMs(pid) - before;
  }
}
