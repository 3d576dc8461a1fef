import http from 'node:http';
import { expect } from 'chai';
import { WebhookAuth } from '../../src/messaging/webhook-auth.js';
import { evolutionMessage } from '../helpers/gateway.js';
import { eventually, post, request } from '../helpers/http.js';
import { randomPhone, randomPin, type LoginBody } from '../helpers/flow.js';
import { testRedis } from '../helpers/redis.js';

/** Helpers of the operations suites: signed webhooks, scraping /metrics, reading Redis raw. */

export const ADMIN = { ADMIN_USER: 'ops', ADMIN_PASSWORD: 'correct horse battery staple', METRICS_TOKEN: 'scrape-token-123' };
export const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
export const ADMIN_AUTH = basic(ADMIN.ADMIN_USER, ADMIN.ADMIN_PASSWORD);

/** Posts a chat message as Evolution API would, signed when a secret is given. */
export async function postChat(base: string, text: string, opts: { phone?: string; fromMe?: boolean; secret?: string } = {}) {
  const raw = JSON.stringify(evolutionMessage({ text, phone: opts.phone ?? randomPhone(), fromMe: opts.fromMe }));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.secret) headers['x-hub-signature-256'] = WebhookAuth.sign(raw, opts.secret);
  return request(base, 'POST', '/messaging-endpoint', { raw, headers });
}

export async function registerPin(base: string): Promise<{ pin: string; emoji: string; pinId: string }> {
  // the server draws the emoji string (as it always does in production)
  const pin = randomPin();
  const reg = await post(base, '/register-pin', { pin });
  expect(reg.status, reg.text).to.equal(200);
  return { pin, emoji: String(reg.body.emojiString), pinId: String(reg.body.pinId) };
}

/** Polls check-login until the registration is verified; returns the (consumed) result. */
export function collectLogin(base: string, pin: string, timeoutMs = 15000): Promise<LoginBody> {
  return eventually(
    async () => {
      const r = await post<LoginBody>(base, '/check-login', { pin });
      if (r.status !== 200) throw new Error(`check-login ${r.status}: ${r.text}`);
      return r.body.verified ? r.body : undefined;
    },
    timeoutMs,
    100,
  );
}

export async function scrape(base: string, authorization = ADMIN_AUTH): Promise<string> {
  const r = await request(base, 'GET', '/metrics', { headers: { authorization } });
  expect(r.status, r.text).to.equal(200);
  return r.text;
}

/** Sum of the samples of `name` whose labels include every pair of `labels`. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) {
      sum += Number(m[4]);
      found = true;
    }
  }
  return found ? sum : NaN;
}

/** Every value under a KEY_PREFIX, as one string: what the dashboard or a Redis dump could show. */
export async function dumpPrefix(prefix: string): Promise<string> {
  const redis = testRedis();
  const parts: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of found) {
        const type = await redis.type(key);
        if (type === 'string') parts.push(String(await redis.get(key)));
        else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
        else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
        parts.push(key);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return parts.join('\n');
}

export interface HoldingGateway {
  url: string;
  /** the `number` of every sendText request since the last arm(), in arrival order */
  hits: string[];
  /** from now on, hold the next first request for `holdMs`, or for ever (null) */
  arm(holdMs: number | null): void;
  /** resolves when the first request since arm() has arrived (and is being held) */
  firstArrived(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An Evolution API stand-in that holds its first request: for `holdMs`, or for ever (null), so a
 * worker is reliably in the middle of a job. Every other request is answered at once.
 */
export async function startHoldingGateway(): Promise<HoldingGateway> {
  const hits: string[] = [];
  let holdMs: number | null = null;
  let arrived: () => void = () => undefined;
  let first = Promise.resolve();
  const answer = (res: http.ServerResponse): void => {
    if (res.destroyed) return;
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ key: { id: `MOCK${hits.length}` }, status: 'PENDING' }));
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push(String((JSON.parse(body) as { number: unknown }).number));
      if (hits.length > 1) return answer(res);
      arrived();
      if (holdMs !== null) setTimeout(() => answer(res), holdMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    hits,
    arm(ms) {
      hits.length = 0;
      holdMs = ms;
      first = new Promise<void>((resolve) => (arrived = resolve));
    },
    firstArrived: () => first,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const evolutionEnv = (url: string): Record<string, string> => ({
  MESSAGING_PROVIDER: 'evolution',
  EVOLUTION_API_URL: url,
  EVOLUTION_API_KEY: 'test-key',
  EVOLUTION_INSTANCE: 'test',
});
