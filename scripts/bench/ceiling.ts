import { generateKeyMaterial } from '../../src/key-material.js';
import { KeyRing } from '../../src/auth/key-ring.js';
import { PinHasher } from '../../src/registrations/pin.js';
import { normalEmojiHash } from '../../src/registrations/emoji.js';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { cpuSum, type Compared } from './baseline.js';
import { emojiFor, evolutionBody, pinFor, signWebhook } from './payloads.js';
import { round } from './stats.js';

/**
 * The ceiling of each ratio on these cores: the req/s ratio an endpoint would reach if its web
 * node did no more than bare Koa's work plus the cryptography the endpoint cannot do without
 * (its security does not allow less: the PIN's keyed hash, the webhook's signature check, the
 * access token's ES256 signature and the refresh token's MACs), with Redis's CPU per request as
 * measured in the same rounds and the load generator at its cost per bare Koa request. On two
 * busy cores the req/s ratio follows the inverse of the summed CPU (the two last columns of the
 * CPU table), so this is the bare Koa sum over that least service sum.
 *
 * It is an estimate that leans towards the service: it leaves out the web node's side of the
 * Redis round trip (the command's encoding, the write, the reply's read and decoding: none of it
 * bare Koa's), the load generator's larger answers and the service's middleware beyond bare
 * Koa's (headers, request id, access line, metrics). A target above its ceiling cannot be
 * reached by the web node's code alone: only by less Redis work per request, or by cores the
 * service does not share with the load generator.
 */
export interface CryptoCosts {
  /** ms per ES256 signature of an access token's signing input (a refresh signs one) */
  es256Sign: number;
  /** ms per HS256 MAC of a refresh token's signing input (a refresh verifies one and signs one) */
  hmacToken: number;
  /** ms per keyed hash of a PIN (a registration and a check each make one) */
  hmacPin: number;
  /** ms per SHA-256 of an emoji string (a registration's index key: one at least) */
  sha256Emoji: number;
  /** ms per signature check of one of the benchmark's webhook bodies (the service's own: WebhookAuth) */
  hmacWebhook: number;
}

/** What each endpoint of the tables must compute, in ms, from the measured costs. */
const REQUIRED: Record<string, { what: string; ms: (c: CryptoCosts) => number }> = {
  'webhook ingestion': { what: "the body's HMAC", ms: (c) => c.hmacWebhook },
  'register-pin': { what: "the PIN's HMAC, the emoji string's SHA-256", ms: (c) => c.hmacPin + c.sha256Emoji },
  'check-login (pending)': { what: "the PIN's HMAC", ms: (c) => c.hmacPin },
  'check-login (verified)': { what: "the PIN's HMAC", ms: (c) => c.hmacPin },
  // the node remembers the access tokens it verified or signed (tokens.ts): no signature check
  profile: { what: 'none (the token is remembered)', ms: () => 0 },
  'refresh-token': { what: 'an ES256 signature, two HS256 MACs', ms: (c) => c.es256Sign + 2 * c.hmacToken },
};

export interface Ceiling {
  endpoint: string;
  /** what it must compute */
  crypto: string;
  cryptoMs: number;
  /** bare Koa's web CPU + cryptoMs + Redis's CPU per request + the baseline's load generator */
  floorSumMs: number;
  baselineSumMs: number;
  /** baselineSumMs ÷ floorSumMs: the highest req/s ratio the endpoint could reach here */
  ceiling: number;
  /** the ratio measured */
  ratio: number;
}

/**
 * ms per call of `fn`: the fastest of five batches, after one batch of warm-up. The fastest, not
 * the median: on two cores shared with other work, a batch the process was preempted in reads
 * long, and the median of five let an HMAC read slower than an ES256 signature.
 */
function timed(fn: (i: number) => unknown, perBatch: number): number {
  const batches: number[] = [];
  let sink = 0;
  for (let b = 0; b <= 5; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) sink += fn(i) ? 1 : 0;
    if (b > 0) batches.push(Number(process.hrtime.bigint() - start) / 1e6 / perBatch);
  }
  if (sink < 0) throw new Error('unreachable: keeps the calls from being optimised away');
  return round(Math.min(...batches), 4);
}

/**
 * Times each primitive with the service's own key ring and PIN hasher, on inputs of the sizes the
 * endpoint rounds send. Run in this process (the service's processes idle meanwhile), just after
 * the rounds, so the figures are of the same hour. About 0.1 s at `perBatch` 400.
 */
export function measureCrypto(perBatch = 400): CryptoCosts {
  const material = generateKeyMaterial('ES256');
  const ring = KeyRing.fromMaterial([material], material.kid);
  const refreshKey = ring.active.refresh!;
  // signing inputs the size of the service's (header + claims, base64url): ≈ 330 and 250 characters
  const claims = (i: number, extra: string): string =>
    `${ring.active.header}.${Buffer.from(JSON.stringify({ typ: 'access', sid: 'x'.repeat(22), iat: 1e9 + i, exp: 1e9 + i + 900, iss: 'pin-auth', sub: 'u'.repeat(22), jti: 'j'.repeat(22), ...(extra ? { roles: [extra] } : {}) })).toString('base64url')}`;
  const access = Array.from({ length: 16 }, (_, i) => claims(i, 'user'));
  const refresh = Array.from({ length: 16 }, (_, i) => claims(i, ''));
  const macs = refresh.map((r) => Buffer.from(refreshKey.sign(r), 'base64url'));
  const pins = new PinHasher('bench-pin-hash-key');
  const webhooks = new WebhookAuth({ secret: 'bench-webhook-secret', jwtKey: undefined });
  const signed = signWebhook(evolutionBody(1, emojiFor(1)), 'bench-webhook-secret');
  const body = Buffer.from(signed.body);
  const credentials = { signature: signed.headers['x-hub-signature-256'], authorization: undefined, pathSecret: undefined };
  // each check must pass, or its time would be a refusal's
  if (!webhooks.verify(body, credentials) || !refreshKey.verify(refresh[0]!, macs[0]!)) throw new Error('ceiling: a signature the service made was refused');
  return {
    es256Sign: timed((i) => ring.active.sign(access[i % 16]!), Math.max(20, perBatch / 4)),
    hmacToken: timed((i) => refreshKey.sign(refresh[i % 16]!) && refreshKey.verify(refresh[i % 16]!, macs[i % 16]!), perBatch) / 2,
    hmacPin: timed((i) => pins.hash(pinFor(i)), perBatch),
    sha256Emoji: timed((i) => normalEmojiHash(emojiFor(i)), perBatch),
    hmacWebhook: timed(() => webhooks.verify(body, credentials), perBatch),
  };
}

/** The ceiling of every endpoint measured (those without a known requirement are left out). */
export function ceilings(list: Array<[string, Compared]>, crypto: CryptoCosts | undefined): Ceiling[] {
  if (!crypto) return [];
  const out: Ceiling[] = [];
  for (const [endpoint, p] of list) {
    const need = REQUIRED[endpoint];
    const redis = p.service.redisCpuPerRequest;
    if (!need || redis === null) continue;
    const cryptoMs = need.ms(crypto);
    const floorSumMs = p.baseline.cpuPerRequest + cryptoMs + redis + p.baseline.loadCpuPerRequest;
    const baselineSumMs = cpuSum(p.baseline);
    if (!(floorSumMs > 0 && baselineSumMs > 0)) continue;
    out.push({
      endpoint,
      crypto: need.what,
      cryptoMs: round(cryptoMs, 4),
      floorSumMs: round(floorSumMs, 4),
      baselineSumMs: round(baselineSumMs, 4),
      ceiling: round(baselineSumMs / floorSumMs, 2),
      ratio: p.ratio,
    });
  }
  return out;
}
