import { randomBytes, randomUUID } from 'node:crypto';

/** Random identifiers: opaque, URL-safe, unguessable. */
export const newShortId = (): string => randomBytes(16).toString('base64url');
export const newUserId = (): string => randomUUID();
