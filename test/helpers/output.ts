/**
 * What a node printed or logged, kept (its last megabytes) so a test can read it and wait for a
 * line: one capture for child processes (processes.ts) and in-process nodes (in-process.ts).
 */
export interface CapturedOutput {
  append(text: string): void;
  text(): string;
  /** resolves once the output matches; rejects after timeoutMs, or when `ended` settles first */
  waitFor(pattern: RegExp, timeoutMs: number, what: string, ended?: Promise<unknown>): Promise<void>;
}

export function captureOutput(): CapturedOutput {
  let out = '';
  const listeners = new Set<() => void>();
  return {
    append(text) {
      out += text;
      if (out.length > 2_000_000) out = out.slice(-1_000_000);
      for (const l of listeners) l();
    },
    text: () => out,
    waitFor(pattern, timeoutMs, what, ended) {
      return new Promise((resolve, reject) => {
        const done = (err?: Error): void => {
          listeners.delete(check);
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        };
        const check = (): void => {
          if (pattern.test(out)) done();
        };
        const timer = setTimeout(() => done(new Error(`${what} did not print ${pattern} in ${timeoutMs} ms. Output:\n${out.slice(-3000)}`)), timeoutMs);
        listeners.add(check);
        void ended?.then(() => {
          if (!pattern.test(out)) done(new Error(`${what} exited before printing ${pattern}. Output:\n${out.slice(-3000)}`));
        });
        check();
      });
    },
  };
}
