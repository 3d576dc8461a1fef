import type { IncomingMessage } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import { hostAllowed } from '../allowed-hosts.js';
import { clientIp } from '../security/client-ip.js';
import type { Probes } from '../security/probes.js';

/**
 * Which Socket.IO handshakes a web node takes (engine.io's `allowRequest`, run for the first
 * request of every connection, websocket upgrade and polling alike):
 * - the origin policy of HTTP: a browser page may connect only from the service's own origin
 *   or one in CORS_ORIGINS. Browsers send `Origin` on every websocket handshake and every
 *   cross-origin request, so a page elsewhere can't borrow its visitor's browser and network
 *   to register a PIN (cross-site WebSocket hijacking). A request without `Origin` comes from
 *   no browser page (a server, a mobile app, a test) and is taken: whoever sends it shows its
 *   own device and address. `Origin: null` (sandboxed frames, files) is refused. With
 *   ALLOWED_HOSTS, a handshake whose `Host` names no listed host is refused first: a DNS
 *   rebinding page is same-host with its own Origin (src/allowed-hosts.ts).
 * - at most SOCKETS_PER_IP open connections per IP group on this node, so one address can't
 *   hold a node's memory. The place is taken here, synchronously, when the handshake is let
 *   through: engine.io makes the connection only after an awaited id, and polling handshakes
 *   pipelined on one TCP connection all pass `allowRequest` before the first of them gets it
 *   (counting at 'connection' let 1,500 of them open 618 against a cap of 300). A handshake
 *   that never becomes a connection gives its place back (`failed`, or its TCP connection closing).
 * Refused handshakes get 403 with engine.io's body `{"code":4,"message":"<CODE>: ..."}`.
 */
export interface AdmissionSettings {
  corsOrigins: readonly string[];
  allowedHosts: readonly string[];
  trustProxy: boolean;
  socketsPerIp: number;
}

export const ORIGIN_REFUSED = 'FORBIDDEN: this origin may not open sockets here (CORS_ORIGINS)';
export const HOST_REFUSED = 'FORBIDDEN: this host name is not served here (ALLOWED_HOSTS)';
export const TOO_MANY_SOCKETS = 'RATE_LIMITED: too many open connections from this network';

/**
 * `host` (the request's Host header) names the same host and port as `origin`, the scheme's
 * default port included either way. The scheme is not compared: behind a TLS-terminating proxy
 * the node sees plain HTTP for an `https:` page of its own.
 */
function sameHost(origin: URL, host: string | undefined): boolean {
  if (!host) return false;
  try {
    return new URL(`${origin.protocol}//${host}`).host === origin.host;
  } catch {
    return false;
  }
}

export function originAllowed(origin: string | undefined, host: string | undefined, listed: ReadonlySet<string>): boolean {
  if (origin === undefined) return true;
  if (listed.has(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null", or not an origin at all
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && sameHost(url, host);
}

/** The client address of a handshake, as the budgets key it (client-ip.ts). */
export function handshakeIp(req: IncomingMessage, trustProxy: boolean): string {
  return clientIp(req.headers, req.socket.remoteAddress, trustProxy);
}

export interface Admission {
  /** engine.io's (and Socket.IO's) `allowRequest` option: a handshake let through holds a place in its IP group's count */
  allowRequest(req: IncomingMessage, answer: (err: string | null | undefined, success: boolean) => void): void;
  /**
   * A connection from `ip` (the client address clientIp gives for its handshake `req`) opened:
   * the place its handshake took becomes the connection's (one is taken if it had none), and it
   * counts against its IP group until `closed` is called with the same address, once.
   */
  opened(req: IncomingMessage | null, ip: string): void;
  closed(ip: string): void;
  /** engine.io's 'connection_error' for `req`: a handshake let through that made no connection gives its place back */
  failed(req: IncomingMessage): void;
}

/**
 * `group` maps a client address to its IP group (ip-group.ts, shared with the budgets). It is a
 * pure function, so a connection's group is worked out again from its address when it closes
 * rather than kept with every open connection.
 */
export function socketAdmission(settings: AdmissionSettings, group: (ip: string) => string, probes: Probes): Admission {
  const listed = new Set(settings.corsOrigins);
  const hosts = new Set(settings.allowedHosts);
  const open = new Map<string, number>();
  // handshakes let through that are not connections yet: their group, and per TCP connection
  // (one 'close' listener however many handshakes are pipelined on it)
  const reserved = new WeakMap<IncomingMessage, string>();
  const waiting = new WeakMap<NetSocket, Set<IncomingMessage>>();

  const release = (g: string): void => {
    const left = (open.get(g) ?? 1) - 1;
    if (left <= 0) open.delete(g);
    else open.set(g, left);
  };
  /** the handshake's place, if it still holds one: its group (no longer waiting) */
  const settle = (req: IncomingMessage): string | undefined => {
    const g = reserved.get(req);
    if (g === undefined) return undefined;
    reserved.delete(req);
    waiting.get(req.socket)?.delete(req);
    return g;
  };
  const reserve = (req: IncomingMessage, g: string): void => {
    open.set(g, (open.get(g) ?? 0) + 1);
    reserved.set(req, g);
    const tcp = req.socket;
    let pending = waiting.get(tcp);
    if (!pending) {
      const set = new Set<IncomingMessage>();
      pending = set;
      waiting.set(tcp, set);
      // the client left before its handshakes became connections (a websocket upgrade never completed)
      tcp.once('close', () => {
        for (const r of set) {
          const left = settle(r);
          if (left !== undefined) release(left);
        }
        waiting.delete(tcp);
      });
    }
    pending.add(req);
  };

  const allowRequest: Admission['allowRequest'] = (req, answer) => {
    const g = group(handshakeIp(req, settings.trustProxy));
    if (!hostAllowed(req.headers.host, hosts)) {
      probes.socketRefused(g, 'origin');
      return answer(HOST_REFUSED, false);
    }
    if (!originAllowed(req.headers.origin, req.headers.host, listed)) {
      probes.socketRefused(g, 'origin');
      return answer(ORIGIN_REFUSED, false);
    }
    if ((open.get(g) ?? 0) >= settings.socketsPerIp) {
      probes.socketRefused(g, 'cap');
      return answer(TOO_MANY_SOCKETS, false);
    }
    reserve(req, g);
    answer(null, true);
  };

  return {
    allowRequest,
    opened(req, ip) {
      if (req && settle(req) !== undefined) return;
      const g = group(ip);
      open.set(g, (open.get(g) ?? 0) + 1);
    },
    closed(ip) {
      release(group(ip));
    },
    failed(req) {
      const g = settle(req);
      if (g !== undefined) release(g);
    },
  };
}
