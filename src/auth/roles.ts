/**
 * A user's roles as Redis keeps them (a JSON array of strings), read back. Anything else gives
 * `fallback`. The parsed array is returned as it is when every entry is a string: JSON.parse
 * makes it exactly as long as its entries, while a filtered copy keeps room for 17 (≈ 150 B),
 * and the claims of every access token a web node remembers (tokens.ts) hold one.
 */
export function parseRoles(raw: string | null | undefined, fallback: readonly string[]): string[] {
  try {
    const v: unknown = JSON.parse(raw ?? '[]');
    if (!Array.isArray(v)) return [...fallback];
    return v.every((r) => typeof r === 'string') ? (v as string[]) : v.filter((r): r is string => typeof r === 'string');
  } catch {
    return [...fallback];
  }
}
