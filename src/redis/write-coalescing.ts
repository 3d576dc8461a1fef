import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisClient } from './connection.js';

/**
 * ioredis writes every command to its socket the moment it is sent: one write system call per
 * command. A worker with dozens of logins in flight sends several commands in each event-loop
 * turn (claim, completion, publish, BullMQ's finish-and-fetch), and those calls were 15 % of
 * its CPU in a profile. This corks the socket at the first write of a turn and uncorks it when
 * the turn's callbacks and promise reactions have run (process.nextTick), so a turn's commands
 * leave in one writev. Order and replies are unchanged, and no command waits for a later turn.
 *
 * Not ioredis's enableAutoPipelining: ioredis 6 sends a script inside an auto-pipeline as a full
 * EVAL every time (it remembers loaded scripts per socket, and a pipeline writes through a new
 * stand-in object), and the login scripts and BullMQ's are kilobytes each. Here every command
 * still goes through the connection's own socket, so scripts stay EVALSHA.
 */
const patched = new WeakSet<Socket>();

/**
 * How long a cork lasts: `turn`, until the current callback's promise reactions have run (the
 * worker: one job's commands); `loop`, until the event loop's check phase (setImmediate), so
 * that the commands of every request read in one poll phase leave in one writev (a web node
 * answering many requests at once: each sends one command from its own callback).
 */
export type CorkSpan = 'turn' | 'loop';

function corkPerTurn(stream: Socket, span: CorkSpan): void {
  if (patched.has(stream)) return;
  patched.add(stream);
  const write = stream.write;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    stream.uncork();
  };
  stream.write = function (this: Socket, ...args: Parameters<Socket['write']>): boolean {
    if (!corked) {
      corked = true;
      stream.cork();
      if (span === 'turn') process.nextTick(uncork);
      else setImmediate(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}

/** Applies to the client's socket now and to each socket it reconnects with (a Cluster client is left as is). */
export function coalesceWrites(client: RedisClient, span: CorkSpan = 'turn'): void {
  if (!(client instanceof Redis)) return;
  const current = (): void => {
    const stream = (client as unknown as { stream?: Socket }).stream;
    if (stream) corkPerTurn(stream, span);
  };
  client.on('connect', current);
  current();
}
