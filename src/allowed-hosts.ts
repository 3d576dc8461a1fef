import { isIP } from 'node:net';

/**
 * ALLOWED_HOSTS, the defence against DNS rebinding: a page of the attacker's own name, made to
 * resolve to this service (a laptop's loopback, an address inside a network), is same-origin
 * with it in the browser's eyes, so the origin checks pass; but its requests carry the
 * attacker's name in `Host`. With the list set, a `Host` naming no listed host is refused. An IP
 * address is always taken (a rebinding page's requests carry its name, never an address; health
 * probes and direct clients often use one), as is a request without `Host` (HTTP/1.0: no
 * browser sends one). An empty list takes every host.
 */
export function hostAllowed(host: string | undefined, listed: ReadonlySet<string>): boolean {
  if (listed.size === 0 || host === undefined || host === '') return true;
  // `[v6]:port` or `[v6]`: an address
  if (host.startsWith('[')) return true;
  const colon = host.lastIndexOf(':');
  const name = (colon === -1 ? host : host.slice(0, colon)).toLowerCase().replace(/\.$/, '');
  return isIP(name) !== 0 || listed.has(name);
}
