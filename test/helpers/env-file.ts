/**
 * An env file read the way Docker Compose's `env_file` reads it (compose-go's dotenv rules):
 * blank lines and lines starting with `#` are skipped, an optional `export ` prefix is
 * dropped, a single-quoted value is taken literally, a double-quoted one with `\n`, `\t`, `\\`
 * and `\"` unescaped, an unquoted one trimmed and cut at a ` #` comment. Compose also
 * interpolates `$VAR` in unquoted and double-quoted values: a `$` there is refused, so a file
 * this reads means the same to Compose whatever its environment.
 */
export function parseComposeEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (m === null) throw new Error(`line ${i + 1}: not KEY=VALUE: ${raw}`);
    const [, key, rest] = m as unknown as [string, string, string];
    const noDollar = (v: string): string => {
      if (/(^|[^\\])\$/.test(v)) throw new Error(`line ${i + 1}: ${key}'s value would be interpolated by Compose`);
      return v;
    };
    if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      if (end < 0) throw new Error(`line ${i + 1}: ${key}: unterminated single quote`);
      out[key] = rest.slice(1, end);
    } else if (rest.startsWith('"')) {
      let body = '';
      let j = 1;
      for (; j < rest.length && rest[j] !== '"'; j++) {
        if (rest[j] === '\\' && j + 1 < rest.length) body += rest[j++]!;
        body += rest[j]!;
      }
      if (j >= rest.length) throw new Error(`line ${i + 1}: ${key}: unterminated double quote`);
      out[key] = noDollar(body).replace(/\\([nrt"\\$])/g, (_, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
    } else {
      out[key] = noDollar(rest.replace(/\s+#.*$/, '').trim());
    }
  });
  return out;
}
