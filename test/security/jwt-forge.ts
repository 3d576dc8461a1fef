import { createHmac, createSign, type KeyObject } from 'node:crypto';

/**
 * Hand-made JWTs for attack tests: every byte of header, payload and signature is ours, so a
 * test can build what no honest library would sign (alg none, HS256 keyed with a public key PEM).
 */
const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

export type Signer = { alg: 'none' } | { alg: 'HS256'; key: string | Buffer } | { alg: 'RS256'; privateKey: KeyObject };

export function forgeJwt(payload: Record<string, unknown>, signer: Signer, extraHeader: Record<string, unknown> = {}): string {
  const signingInput = `${b64({ alg: signer.alg, typ: 'JWT', ...extraHeader })}.${b64(payload)}`;
  switch (signer.alg) {
    case 'none':
      return `${signingInput}.`;
    case 'HS256':
      return `${signingInput}.${createHmac('sha256', signer.key).update(signingInput).digest('base64url')}`;
    case 'RS256':
      return `${signingInput}.${createSign('RSA-SHA256').update(signingInput).sign(signer.privateKey).toString('base64url')}`;
  }
}

/** The claims of a token, unverified (tests read what the service issued). */
export function decodeJwt(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The same token with one payload claim changed and the original signature kept. */
export function tamperJwt(token: string, changes: Record<string, unknown>): string {
  const [header = '', , signature = ''] = token.split('.');
  return `${header}.${b64({ ...decodeJwt(token), ...changes })}.${signature}`;
}
