import type { JSONSchemaType } from 'ajv';

/** Request schemas, compiled once (validate.ts). Extra properties are ignored. */
export interface RegisterPinBody {
  pin: string;
  /** optional: the server draws one when omitted (and always, with EMOJI_CHOICE=server) */
  emojiString?: string;
  /** optional: names the attempt, the same on each retry (HTTP: the Idempotency-Key header wins) */
  idempotencyKey?: string;
}
export interface CheckLoginBody {
  pin: string;
}
export interface CancelAuthBody {
  pin: string;
}
export interface RefreshBody {
  refreshToken?: string;
  id?: string;
}
export interface LogoutBody {
  userId?: string;
  id?: string;
}
/** DELETE /sessions/:id (path parameters) */
export interface SessionParams {
  id: string;
}
export interface SendMessageBody {
  phoneNumber: string;
  message: string;
  /** `evolution:<instance>`, `cloud:<phone_number_id>` or `log`; absent: the default channel */
  channel?: string;
}
export interface MessageIdParams {
  id: string;
}

const pin = { type: 'string', pattern: '^[\\x21-\\x7E]{4,128}$' } as const;
const emojiString = { type: 'string', minLength: 1, maxLength: 512 } as const;
const id = { type: 'string', minLength: 1, maxLength: 128 } as const;
const jwtString = { type: 'string', minLength: 1, maxLength: 4096 } as const;

// Not JSONSchemaType, whose optional fields must be `nullable`: `"emojiString": null` is a
// VALIDATION_ERROR like any other wrong type.
export const registerPinSchema = {
  type: 'object',
  properties: { pin, emojiString, idempotencyKey: { type: 'string', pattern: '^[\\x21-\\x7E]{1,255}$' } },
  required: ['pin'],
} as const;

export const checkLoginSchema: JSONSchemaType<CheckLoginBody> = {
  type: 'object',
  properties: { pin },
  required: ['pin'],
};

export const cancelAuthSchema: JSONSchemaType<CancelAuthBody> = checkLoginSchema;

// The two-form bodies are not JSONSchemaType: it would make their optional fields `nullable`,
// and `{"id": null}` must be a VALIDATION_ERROR like any other wrong type.
export const refreshSchema = {
  type: 'object',
  properties: { refreshToken: jwtString, id },
  anyOf: [{ required: ['refreshToken'] }, { required: ['id'] }],
} as const;

export const logoutSchema = {
  type: 'object',
  properties: { userId: id, id },
  anyOf: [{ required: ['userId'] }, { required: ['id'] }],
} as const;

/** A channel as the config names it: one of the configured ones is checked beyond the schema. */
export const channelSchema = {
  type: 'string',
  pattern: '^(log|evolution:[^\\s]{1,128}|cloud:[0-9]{1,32})$',
  description:
    'The channel to send on: `evolution:<instance>`, `cloud:<phone_number_id>` or `log`, one of those configured (default: ' +
    'DEFAULT_CHANNEL, else the first configured).',
} as const;

// not JSONSchemaType: it would make `channel` nullable, and `{"channel": null}` must be a VALIDATION_ERROR
export const sendMessageSchema = {
  type: 'object',
  properties: {
    phoneNumber: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$' },
    message: { type: 'string', minLength: 1, maxLength: 4096 },
    channel: channelSchema,
  },
  required: ['phoneNumber', 'message'],
} as const;

/** `GET /messages/:id`: the `messageId` /send-message answered (an outbound job id). */
export const messageIdParamsSchema: JSONSchemaType<MessageIdParams> = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'the messageId /send-message answered' } },
  required: ['id'],
};

/**
 * A session id as GET /sessions lists it: an app session's (22 base64url characters today; room
 * to change), or `oidc.` and an OpenID grant's id (43): the dot keeps the two kinds apart.
 */
export const sessionParamsSchema: JSONSchemaType<SessionParams> = {
  type: 'object',
  properties: { id: { type: 'string', pattern: '^(?:oidc\\.)?[A-Za-z0-9_-]{1,64}$' } },
  required: ['id'],
};
