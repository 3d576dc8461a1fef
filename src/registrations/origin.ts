import { isIP, isIPv4 } from 'node:net';
import { ipGroup } from '../security/ip-group.js';
import { remembered } from '../remembered.js';

/**
 * Where a sign-in was asked from, as a person can recognise it ("Chrome on Windows",
 * "203.0.113.x"): shown in the chat confirmation and in the sessions list. Taken from the
 * registering request (HTTP or socket handshake) and kept compactly (one short field of the
 * registration, then of the session), never the raw User-Agent or the full address.
 */
export interface Origin {
  /**
   * browser or app and platform, e.g. "Firefox on Android"; "unnamed app" without a User-Agent
   * (every browser sends one; Node's http and ws modules, so a socket client from Node, send
   * none); "unknown device" for one we can't read
   */
  device: string;
  /** the address with its host part masked: IPv4 /24, IPv6 /48 */
  ip: string;
}

const UNKNOWN_DEVICE = 'unknown device';
const UNNAMED_APP = 'unnamed app';
const MAX_DEVICE = 48;
/** the part of a User-Agent that is read: every browser and platform token sits well within it */
const UA_READ = 512;

/** First match wins: order matters (Edge and Opera say "Chrome", Chrome says "Safari"). */
const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*Safari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
  [/\bokhttp\//, 'Android app'],
  [/\bCFNetwork\//, 'iOS app'],
  [/\bDart\//, 'Flutter app'],
  // Node's fetch says "node" (older undici "undici"); socket.io-client's polling "node-XMLHttpRequest"
  [/\bnode(?:-fetch|-XMLHttpRequest)?\b|\bundici\b|\baxios\/|^got \(/i, 'Node.js app'],
  [/^Deno\//, 'Deno app'],
  [/^Bun\//, 'Bun app'],
  [/\bpython-requests\/|\baiohttp\/|^python-(?:urllib|httpx)|^Python-urllib\//, 'Python app'],
  [/^Go-http-client\//, 'Go app'],
  [/^Java-http-client\/|^Apache-HttpClient\/|^Java\//, 'Java app'],
];

const PLATFORMS: Array<[RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b|\biOS\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b|\bDarwin\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/** A short, human name for a User-Agent ("Chrome on Windows"); bounded whatever the header holds. */
export function describeDevice(userAgent: string | undefined): string {
  const ua = (userAgent ?? '').slice(0, UA_READ);
  if (ua.trim() === '') return UNNAMED_APP;
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1];
  const platform = PLATFORMS.find(([re]) => re.test(ua))?.[1];
  if (browser && platform) return `${browser} on ${platform}`;
  return (browser ?? platform ?? UNKNOWN_DEVICE).slice(0, MAX_DEVICE);
}

/** The address with its host part hidden: 203.0.113.x; 2001:db8:85a3::/48 (short form); else "unknown network". */
export function maskIp(ip: string | undefined): string {
  const addr = (ip ?? '').trim();
  // a zone id (fe80::1%eth0) names a local interface: the address before it is what is masked
  if (!isIP(addr.split('%')[0]!)) return 'unknown network';
  // IPv6 as its /48 group; an IPv4-mapped address (a dual-stack socket's IPv4 client) as IPv4
  const group = ipGroup(addr, 48);
  return isIPv4(group) ? `${group.slice(0, group.lastIndexOf('.'))}.x` : group;
}

/**
 * A registering client's User-Agent and address recur (its retries, a proxy's many clients), and
 * naming them runs up to two dozen regular expressions and an address parse: remembered, by the part
 * describeDevice reads (so at most ≈ 1 MB of User-Agents, whatever clients send).
 */
const ORIGINS_REMEMBERED = 1024;
const deviceOf = remembered(describeDevice, ORIGINS_REMEMBERED);
const networkOf = remembered(maskIp, ORIGINS_REMEMBERED);

export function originOf(userAgent: string | undefined, ip: string | undefined): Origin {
  return { device: deviceOf((userAgent ?? '').slice(0, UA_READ)), ip: networkOf(ip ?? '') };
}

/** One Redis field: `device\nip` (neither part can hold a newline). */
export function encodeOrigin(o: Origin): string {
  return `${o.device}\n${o.ip}`;
}

export function decodeOrigin(raw: string | null | undefined): Origin {
  if (!raw) return { device: UNKNOWN_DEVICE, ip: 'unknown network' };
  const nl = raw.indexOf('\n');
  return nl === -1 ? { device: raw, ip: 'unknown network' } : { device: raw.slice(0, nl), ip: raw.slice(nl + 1) };
}
