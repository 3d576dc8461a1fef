/** Small statistics over latency samples (milliseconds) and throughput. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of a sorted array (q in 0..1). */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export function summarise(samples: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const arr = Array.from(sorted);
  return {
    count: arr.length,
    p50: round(percentile(arr, 0.5), 2),
    p99: round(percentile(arr, 0.99), 2),
    max: round(arr.length ? arr[arr.length - 1]! : NaN, 2),
    mean: round(mean(arr), 2),
  };
}

export function round(n: number, digits = 0): number {
  if (!Number.isFinite(n)) return n;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export const now = (): number => performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Median (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
