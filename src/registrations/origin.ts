import { isIP } from 'node:net';
import { remembered } from '../remembered.js';

/**
 * Where a sign-in was asked from, as a person can recognise it ("Chrome on Windows",
 * "203.0.113.x"): shown in the chat confirmation and in the sessions list. Taken from the
 * registering request (HTTP or socket handshake) and kept compactly (one short field of the
 * registration, then of the session), never the raw User-Agent or the full address.
 */
export interface Origin {
  /** browser or app and platform, e.g. "Firefox on Android"; "unknown device" when unparseable */
  device: string;
  /** the address with its host part masked: IPv4 /24, IPv6 /48 */
  ip: string;
}

const UNKNOWN_DEVICE = 'unknown device';
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
  [/\bnode(?:-fetch)?\b|\bundici\b|\baxios\//i, 'Node.js client'],
  [/\bpython-requests\/|\baiohttp\//, 'Python client'],
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
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1];
  const platform = PLATFORMS.find(([re]) => re.test(ua))?.[1];
  if (browser && platform) return `${browser} on ${platform}`;
  return (browser ?? platform ?? UNKNOWN_DEVICE).slice(0, MAX_DEVICE);
}

const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** The address with its host part hidden: 203.0.113.x; 2001:db8:85a3::/48; else "unknown network". */
export function maskIp(ip: string | undefined): string {
  let addr = (ip ?? '').trim();
  // called on every registration: the mapped form is tried only when it can match (':' first)
  const mapped = addr.charCodeAt(0) === 58 ? IPV4_MAPPED.exec(addr) : null;
  if (mapped) addr = mapped[1]!;
  const family = isIP(addr);
  if (family === 4) return addr.slice(0, addr.lastIndexOf('.')) + '.x';
  if (family === 6) return expandIpv6(addr).slice(0, 3).map((g) => g.replace(/^0+(?=.)/, '')).join(':') + '::/48';
  return 'unknown network';
}

function expandIpv6(addr: string): string[] {
  const [head = '', tail] = addr.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0');
  return [...left, ...fill, ...right];
}

/**
 * A registering client's User-Agent and address recur (its retries, a proxy's many clients), and
 * naming them runs up to 18 regular expressions and an address parse: remembered, by the part
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
