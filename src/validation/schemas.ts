import type { JSONSchemaType } from 'ajv';

/** Request schemas, compiled once (validate.ts). Extra properties are ignored. */
export interface RegisterPinBody {
  pin: string;
  emojiString: string;
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
export interface SendMessageBody {
  phoneNumber: string;
  message: string;
}

const pin = { type: 'string', pattern: '^[\\x21-\\x7E]{4,128}$' } as const;
const emojiString = { type: 'string', minLength: 1, maxLength: 512 } as const;
const id = { type: 'string', minLength: 1, maxLength: 128 } as const;
const jwtString = { type: 'string', minLength: 1, maxLength: 4096 } as const;

export const registerPinSchema: JSONSchemaType<RegisterPinBody> = {
  type: 'object',
  properties: { pin, emojiString },
  required: ['pin', 'emojiString'],
};

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

export const sendMessageSchema: JSONSchemaType<SendMessageBody> = {
  type: 'object',
  properties: {
    phoneNumber: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$' },
    message: { type: 'string', minLength: 1, maxLength: 4096 },
  },
  required: ['phoneNumber', 'message'],
};
