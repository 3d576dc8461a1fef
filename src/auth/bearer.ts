/** The token of an `Authorization: Bearer <token>` header, or null (one parser for API, admin and webhook). */
export function parseBearer(header: string | undefined): string | null {
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1]! : null;
}
