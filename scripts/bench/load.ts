import http from 'node:http';
import autocannon from 'autocannon';
import { now, round, summarise, type LatencySummary } from './stats.js';

/**
 * Load generation on loopback. `blast` drives one endpoint as hard as `connections` allow for a
 * fixed time (autocannon; latencies kept at sub-millisecond resolution, which autocannon's own
 * histogram rounds away). `runAll` sends a known list of requests with bounded concurrency and
 * reports each status, for setting up state and for counting exactly what was accepted.
 */
export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface BlastResult {
  /** completed requests per second over the run */
  rps: number;
  latency: LatencySummary;
  ok: number;
  /** non-2xx answers and connection errors */
  failed: number;
  seconds: number;
}

export interface BlastOptions {
  connections: number;
  /** run for this long… */
  seconds?: number;
  /** …or until this many requests were answered (takes precedence) */
  amount?: number;
  /** every answer's status and body (e.g. to put a rotated token back in a pool) */
  onBody?: (status: number, body: string) => void;
}

/** How often autocannon samples, and so how late after its end a blast stops. */
const SAMPLE_MS = 100;

/** Sends `next()` requests to `url` over `connections` keep-alive connections, closed loop. */
export async function blast(url: string, next: () => RequestSpec, opts: BlastOptions): Promise<BlastResult> {
  const latencies: number[] = [];
  const first = next();
  const startedAt = now();
  let lastAnswerAt = startedAt;
  const { onBody } = opts;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: opts.connections,
        ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: opts.seconds ?? 1 }),
        pipelining: 1,
        timeout: 10,
        // autocannon ends a run at its first sample tick after the duration or the last answer:
        // with its default of one a second, every blast of the quick run's 0.3–0.8 s lasted a
        // whole second (and an `amount` run up to one more). Ticks every 100 ms end it on time.
        sampleInt: SAMPLE_MS,
        requests: [
          {
            method: first.method,
            path: first.path,
            setupRequest: (req) => {
              const spec = next();
              return { ...req, method: spec.method, path: spec.path, body: spec.body, headers: spec.headers };
            },
            ...(onBody ? { onResponse: (status: number, body: string) => onBody(status, body) } : {}),
          },
        ],
      },
      (err: unknown, res: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(res)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      lastAnswerAt = now();
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
  // A bounded run (amount) ends on autocannon's next sample tick, not at its last answer: its
  // rate is counted to the last answer (with one-second ticks a run of 300 requests read as 300 req/s).
  const seconds = opts.amount !== undefined ? Math.max(1e-3, (lastAnswerAt - startedAt) / 1000) : (result.finish.getTime() - result.start.getTime()) / 1000;
  return {
    rps: round(result.requests.total / seconds),
    latency: summarise(latencies),
    ok: result['2xx'],
    failed: result.non2xx + result.errors,
    seconds: round(seconds, 2),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** One request over the shared keep-alive agent; status 0 when the connection failed. */
export function send(url: string, spec: RequestSpec, onSent?: () => void): Promise<Answer> {
  return new Promise((resolve) => {
    const started = now();
    const req = http.request(url + spec.path, { method: spec.method, headers: spec.headers, agent, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: now() - started }));
      res.on('error', () => resolve({ status: 0, body: '', ms: now() - started }));
    });
    req.on('error', () => resolve({ status: 0, body: '', ms: now() - started }));
    req.on('timeout', () => req.destroy());
    req.end(spec.body);
    onSent?.();
  });
}

/**
 * Runs `count` requests, at most `concurrency` at a time; returns every answer in order.
 * `onAnswer` sees each answer as it arrives (a request made next may depend on it).
 */
export async function runAll(
  count: number,
  concurrency: number,
  make: (i: number) => { url: string; spec: RequestSpec },
  onAnswer?: (answer: Answer) => void,
): Promise<Answer[]> {
  const answers: Answer[] = new Array(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const { url, spec } = make(i);
      const answer = await send(url, spec);
      answers[i] = answer;
      onAnswer?.(answer);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return answers;
}

export const isOk = (a: Answer): boolean => a.status >= 200 && a.status < 300;

export function closeAgent(): void {
  agent.destroy();
}
