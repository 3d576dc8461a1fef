import net from 'node:net';

/**
 * The network a client address belongs to, for per-IP budgets. One ISP customer gets a whole
 * IPv6 /64 (RFC 6177), so keying budgets on the full address would let them rotate through
 * 2^64 fresh budgets: IPv6 addresses are grouped by a prefix (default /64). IPv4 addresses are
 * scarce enough to stay one per budget; an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`, what
 * a dual-stack socket reports for an IPv4 client) is that IPv4 address.
 *
 * Returns `203.0.113.7` or `2001:db8:1:2::/64` (the short form, ipv6Text); anything that is not an address (it should not
 * happen) is returned as is, so it still gets a budget of its own.
 */
export function ipGroup(address: string, ipv6PrefixLength: number): string {
  const ip = address.trim();
  if (net.isIPv4(ip)) return ip;
  // a zone id (fe80::1%eth0) names a local interface, not a network
  const bare = ip.split('%')[0]!;
  if (!net.isIPv6(bare)) return ip;
  const words = ipv6Words(bare);
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0 && words[4] === 0 && words[5] === 0xffff) {
    return `${words[6]! >> 8}.${words[6]! & 0xff}.${words[7]! >> 8}.${words[7]! & 0xff}`;
  }
  const kept = words.map((w, i) => {
    const bits = Math.min(16, Math.max(0, ipv6PrefixLength - i * 16));
    return bits === 0 ? 0 : w & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${ipv6Text(kept)}/${ipv6PrefixLength}`;
}

/**
 * Eight 16-bit words in the usual short form (RFC 5952): lower-case hex without leading zeros,
 * the longest run of two or more zero words (the first of equal runs) as `::`. `::/48`,
 * `2001:db8::/48`, `2001:db8:1:2::/64`.
 */
export function ipv6Text(words: readonly number[]): string {
  let [start, length] = [-1, 0];
  for (let i = 0; i < words.length; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < words.length && words[j] === 0) j++;
    if (j - i > length && j - i >= 2) [start, length] = [i, j - i];
    i = j;
  }
  const hex = (part: readonly number[]): string => part.map((w) => w.toString(16)).join(':');
  return start === -1 ? hex(words) : `${hex(words.slice(0, start))}::${hex(words.slice(start + length))}`;
}

/** The eight 16-bit words of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
export function ipv6Words(ip: string): number[] {
  let text = ip.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left = '', right] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const head = parse(left);
  if (right === undefined) return head;
  const tail = parse(right);
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}
