import { createHash } from 'node:crypto';
import net from 'node:net';
import { scriptMarker, scriptSource, type ScriptName } from '../../src/redis/scripts.js';

/**
 * A small TCP proxy between the service and a private redis-server, for fault tests: it can hold
 * Redis' replies for a while (a network hiccup: the command reached Redis and ran, the answer is
 * late), drop every connection (reset), or black-hole traffic (accept bytes, forward nothing,
 * answer nothing). Clients connect to `url`; the proxy forwards to `target`.
 */
export type FaultMode = { kind: 'pass' } | { kind: 'delay-replies'; ms: number } | { kind: 'black-hole' };

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  /** replies of this connection are held until then (ms since epoch) */
  holdUntil: number;
}

export class FaultProxy {
  private mode: FaultMode = { kind: 'pass' };
  private readonly pairs = new Set<Pair>();
  private trigger: { pattern: RegExp; ms: number; hit: () => void } | null = null;
  private drop: { pattern: RegExp; hit: () => void } | null = null;
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
    let proxy: FaultProxy | undefined;
    const server = net.createServer((client) => proxy!.accept(client, targetPort, targetHost));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new FaultProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Replies from Redis reach clients `ms` late (requests still go through at once). */
  delayReplies(ms: number): void {
    this.mode = { kind: 'delay-replies', ms };
  }

  /** Bytes in either direction are swallowed; connections stay open; new ones are accepted. */
  blackHole(): void {
    this.mode = { kind: 'black-hole' };
  }

  /**
   * Holds the replies of the next connection that sends a request matching `pattern` (tested
   * against the raw RESP bytes, e.g. a script's SHA1 or a unique value) for `ms`: that command
   * runs in Redis at once, its answer (and whatever follows on that connection) comes `ms` late.
   * Resolves when the request has passed through.
   */
  delayReplyTo(pattern: RegExp, ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.trigger = { pattern, ms, hit: resolve };
    });
  }

  /**
   * The connection that sends the next request matching `pattern` is reset before the request
   * reaches Redis (as a network that fails mid-request): the command never runs, its client sees
   * the connection drop and reconnects. Resolves when that happened.
   */
  dropRequest(pattern: RegExp): Promise<void> {
    return new Promise((resolve) => {
      this.drop = { pattern, hit: resolve };
    });
  }

  /** Back to forwarding everything at once (replies already held still arrive late). */
  pass(): void {
    this.mode = { kind: 'pass' };
  }

  /** Resets every open connection (the clients see ECONNRESET and reconnect). */
  dropConnections(): void {
    for (const { client, upstream } of this.pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  get connections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket, port: number, host: string): void {
    const upstream = net.connect(port, host);
    const pair: Pair = { client, upstream, holdUntil: 0 };
    this.pairs.add(pair);
    const end = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      if (this.mode.kind === 'black-hole') return;
      const drop = this.drop;
      if (drop?.pattern.test(chunk.toString('latin1'))) {
        this.drop = null;
        client.resetAndDestroy();
        upstream.destroy();
        drop.hit();
        return;
      }
      const trigger = this.trigger;
      if (trigger?.pattern.test(chunk.toString('latin1'))) {
        this.trigger = null;
        pair.holdUntil = Date.now() + trigger.ms;
        trigger.hit();
      }
      upstream.write(chunk);
    });
    // replies keep their order: a late timer must never let a later chunk overtake a held one
    const held: { due: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | null = null;
    const flush = (): void => {
      timer = null;
      while (held.length > 0 && held[0]!.due <= Date.now()) {
        const { chunk } = held.shift()!;
        if (!client.destroyed) client.write(chunk);
      }
      if (held.length > 0) timer = setTimeout(flush, held[0]!.due - Date.now());
    };
    upstream.on('data', (chunk: Buffer) => {
      const mode = this.mode;
      if (mode.kind === 'black-hole') return;
      const now = Date.now();
      const due = Math.max(pair.holdUntil, now + (mode.kind === 'delay-replies' ? mode.ms : 0));
      if (held.length === 0 && due <= now) return void client.write(chunk);
      held.push({ due: Math.max(due, held[held.length - 1]?.due ?? 0), chunk });
      if (timer === null) timer = setTimeout(flush, held[0]!.due - now);
    });
  }
}

/** Matches a request running one of our Lua scripts: its SHA1 (EVALSHA) or its source (EVAL). */
export function scriptRequest(name: ScriptName): RegExp {
  const source = scriptSource(name);
  const sha = createHash('sha1').update(source).digest('hex');
  const firstLine = scriptMarker(name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${sha}|${firstLine}`);
}
