/**
 * The client's address as Koa's `ctx.ip` gives it: behind a trusted proxy (TRUST_PROXY) the last
 * X-Forwarded-For hop (the one our proxy added; earlier hops are the client's to forge), else
 * the connection's peer. One rule for the webhook (which reads the bare request), for sockets and
 * for Koa, so limits keyed by IP count a client the same way whichever door it uses.
 */
export function clientIp(headers: Record<string, string | string[] | undefined>, peer: string | undefined, trustProxy: boolean): string {
  const header = trustProxy ? headers['x-forwarded-for'] : undefined;
  const forwarded = Array.isArray(header) ? header.join(',') : header;
  if (forwarded) {
    const last = forwarded.split(',').pop()?.trim();
    if (last) return last;
  }
  return peer ?? '';
}
