import { ERROR_STATUS } from '../errors.js';

/**
 * JSON Schemas of what the API answers and the sockets emit: the one description of each
 * response, used by the OpenAPI document (src/openapi/) and by the tests that check real
 * responses against it. Request schemas are in schemas.ts.
 */

const str = { type: 'string' } as const;
const int = { type: 'integer', minimum: 0 } as const;

export const userSchema = {
  type: 'object',
  description:
    'The signed-in person: found by any identifier the chat message carries (phone, WhatsApp LID, Cloud API user id), ' +
    'or created with roles ["user"] on first login.',
  properties: {
    id: str,
    name: { type: 'string', description: "the gateway's display name up to its first space" },
    phone: {
      type: 'string',
      description: 'canonical E.164, e.g. +5511999998888; absent while the account has no known phone (its person signed in by LID or user id only)',
    },
    roles: { type: 'array', items: str },
  },
  required: ['id', 'name', 'roles'],
} as const;

export const profileUserSchema = {
  ...userSchema,
  properties: { ...userSchema.properties, surname: { type: 'string', description: 'the display name after its first space' } },
  required: [...userSchema.required, 'surname'],
} as const;

export const loginResultSchema = {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'access token (HS256 JWT)' },
    refreshToken: { type: 'string', description: 'refresh token (HS256 JWT); rotates on each use' },
    user: userSchema,
  },
  required: ['token', 'refreshToken', 'user'],
} as const;

export const errorBodySchema = {
  type: 'object',
  description: 'Every error. `details` on VALIDATION_ERROR; `Retry-After` header on RATE_LIMITED and NETWORK_ERROR.',
  properties: {
    success: { const: false },
    error: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: str,
    details: {
      type: 'array',
      items: { type: 'object', properties: { field: str, message: str }, required: ['field', 'message'] },
    },
  },
  required: ['success', 'error', 'message'],
} as const;

export const healthSchema = {
  type: 'object',
  properties: {
    status: {
      enum: ['ok', 'degraded', 'unavailable'],
      description: '`degraded`: Redis answers but refuses writes; `unavailable`: it does not answer (both 503)',
    },
    timestamp: { type: 'string', format: 'date-time' },
    activePins: { type: ['integer', 'null'], description: 'null while Redis does not answer' },
    instance: str,
    reason: { type: 'string', description: 'with a 503: the Redis fault (out-of-memory, read-only, unreachable, ...)' },
  },
  required: ['status', 'timestamp', 'activePins', 'instance'],
} as const;

export const registerPinResponseSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    message: str,
    pinId: { type: 'string', description: 'public id of the registration (logs, support)' },
    expiresIn: { ...int, description: 'seconds left' },
    emojiString: { type: 'string', description: 'the emoji string to send (the one given, or one picked by the service when none was)' },
    whatsappNumber: {
      type: 'string',
      pattern: '^[1-9][0-9]{6,14}$',
      description:
        'the WhatsApp number to send it to (digits, international format): ' +
        'the first healthy one of the numbers configured (WHATSAPP_NUMBERS, else WHATSAPP_NUMBER); absent when none is configured',
    },
  },
  required: ['success', 'message', 'pinId', 'expiresIn'],
} as const;

export const checkLoginPendingSchema = {
  type: 'object',
  title: 'pending',
  properties: {
    success: { const: true },
    verified: { const: false },
    message: str,
    awaitingConfirmation: { type: 'boolean', description: 'true while the person is asked in the chat to confirm the login' },
  },
  required: ['success', 'verified', 'message'],
} as const;

export const checkLoginVerifiedSchema = {
  type: 'object',
  title: 'verified (answered once, then 404)',
  properties: { success: { const: true }, verified: { const: true }, ...loginResultSchema.properties },
  required: ['success', 'verified', ...loginResultSchema.required],
} as const;

export const checkLoginResponseSchema = { oneOf: [checkLoginPendingSchema, checkLoginVerifiedSchema] } as const;

export const tokenPairSchema = {
  type: 'object',
  properties: { success: { const: true }, token: str, refreshToken: str },
  required: ['success', 'token', 'refreshToken'],
} as const;

export const profileResponseSchema = {
  type: 'object',
  properties: { success: { const: true }, user: profileUserSchema },
  required: ['success', 'user'],
} as const;

export const messageResponseSchema = {
  type: 'object',
  properties: { success: { const: true }, message: str },
  required: ['success', 'message'],
} as const;

export const sendMessageResponseSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    message: str,
    messageId: { type: 'string', description: 'id of the queued message (GET /messages/{id})' },
    channel: { type: 'string', description: 'the channel it is sent on' },
  },
  required: ['success', 'message', 'messageId'],
} as const;

const deliveryStatus = { enum: ['queued', 'sent', 'delivered', 'read', 'failed'] } as const;

/** GET /messages/:id */
export const messageStatusResponseSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    messageId: str,
    status: deliveryStatus,
    channel: str,
    kind: str,
    gatewayMessageId: { type: ['string', 'null'], description: "the gateway's id for the message once it took it" },
    at: {
      type: 'object',
      description: 'ms since epoch at which each status was reached',
      propertyNames: deliveryStatus,
      additionalProperties: { type: 'integer' },
    },
    error: { type: ['string', 'null'] },
  },
  required: ['success', 'messageId', 'status', 'channel', 'kind', 'gatewayMessageId', 'at', 'error'],
} as const;

export const webhookReceiptSchema = {
  type: 'object',
  properties: {
    received: { const: true },
    accepted: { ...int, description: 'messages queued for matching' },
    ignored: { ...int, description: 'events or messages that are not logins (status updates, groups, own messages)' },
  },
  required: ['received', 'accepted', 'ignored'],
} as const;

/** GET /sessions */
export const sessionsListResponseSchema = {
  type: 'object',
  properties: {
    success: { type: 'boolean', const: true },
    sessions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', description: "for DELETE /sessions/:id; an OpenID login's starts with `oidc.`" },
          kind: {
            type: 'string',
            enum: ['app', 'oidc'],
            description: "`app`: a session of this service's tokens; `oidc`: an app signed in through the OpenID provider",
          },
          client: {
            type: 'object',
            description: 'the app an OpenID login is for (kind `oidc` only)',
            properties: { id: { type: 'string' }, name: { type: 'string' } },
            required: ['id', 'name'],
          },
          createdAt: { type: 'string', format: 'date-time' },
          lastUsedAt: {
            type: 'string',
            format: 'date-time',
            description: 'last login or token refresh of the session (an OpenID login: its last code or token)',
          },
          expiresAt: { type: 'string', format: 'date-time' },
          device: { type: 'string', description: 'browser or app and platform of the signing-in request' },
          ip: { type: 'string', description: 'address of the signing-in request, host part masked' },
          current: { type: 'boolean', description: 'the session of the token making the request' },
        },
        required: ['id', 'kind', 'createdAt', 'lastUsedAt', 'expiresAt', 'device', 'ip', 'current'],
      },
    },
  },
  required: ['success', 'sessions'],
} as const;

/** DELETE /sessions */
export const signOutEverywhereResponseSchema = {
  type: 'object',
  properties: { ...messageResponseSchema.properties, closed: { ...int, description: 'sessions closed, OpenID logins included' } },
  required: [...messageResponseSchema.required, 'closed'],
} as const;

/** GET /.well-known/jwks.json */
export const jwksResponseSchema = {
  type: 'object',
  description: 'JSON Web Key Set (RFC 7517): the public keys tokens are verified with, the active key first',
  properties: {
    keys: {
      type: 'array',
      items: { type: 'object', properties: { kty: str, kid: str, alg: str, use: str }, required: ['kty', 'kid'] },
    },
  },
  required: ['keys'],
} as const;

// --- socket payloads (server → client) -------------------------------------------------------

export const pinRegisteredEventSchema = {
  type: 'object',
  properties: { pinId: str, expiresIn: int, emojiString: str, whatsappNumber: registerPinResponseSchema.properties.whatsappNumber },
  required: ['pinId', 'expiresIn'],
} as const;

export const pinExpiredEventSchema = { type: 'object', properties: { pin: str }, required: ['pin'] } as const;

export const pinIdEventSchema = { type: 'object', properties: { pinId: str }, required: ['pinId'] } as const;

export const pinErrorEventSchema = {
  type: 'object',
  properties: {
    error: errorBodySchema.properties.error,
    message: str,
    details: errorBodySchema.properties.details,
    retryAfter: { ...int, description: 'RATE_LIMITED: seconds to wait' },
  },
  required: ['error', 'message'],
} as const;

export const ackSchema = {
  description: "What an event's acknowledgement callback receives: the event's answer plus `success`.",
  oneOf: [
    { type: 'object', properties: { success: { const: true }, ...pinRegisteredEventSchema.properties }, required: ['success', 'pinId'] },
    { type: 'object', properties: { success: { const: false }, ...pinErrorEventSchema.properties }, required: ['success', 'error', 'message'] },
  ],
} as const;
