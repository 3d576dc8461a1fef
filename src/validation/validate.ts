import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { AppError } from '../errors.js';
import { isEmojiString, MAX_EMOJI } from '../registrations/emoji.js';
import * as s from './schemas.js';

/**
 * Request validation for HTTP and sockets alike: ajv for shape, then the rules a schema can't
 * say (emoji strings). Failures are VALIDATION_ERROR with `details: [{field, message}]`.
 */
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });

export interface FieldError {
  field: string;
  message: string;
}

function describe(e: ErrorObject): FieldError {
  const missing = e.keyword === 'required' ? String((e.params as { missingProperty?: string }).missingProperty ?? '') : '';
  const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || missing || '(body)';
  if (e.keyword === 'pattern' && field === 'pin') return { field, message: 'must be 4 to 128 printable ASCII characters without spaces' };
  if (e.keyword === 'pattern' && field === 'phoneNumber') return { field, message: 'must be in international format: + then 7 to 15 digits' };
  if (e.keyword === 'required') return { field, message: 'is required' };
  return { field, message: e.message ?? 'is invalid' };
}

function compile<T>(schema: object): (body: unknown) => T {
  const fn = ajv.compile(schema) as ValidateFunction<T>;
  return (body: unknown): T => {
    if (fn(body)) return body;
    const details = (fn.errors ?? []).filter((e) => e.keyword !== 'anyOf').map(describe);
    const unique = details.filter((d, i) => details.findIndex((o) => o.field === d.field && o.message === d.message) === i);
    if (unique.length === 0) unique.push({ field: '(body)', message: 'one of the accepted fields is required' });
    throw new AppError('VALIDATION_ERROR', `Invalid data: ${unique.map((d) => `${d.field} ${d.message}`).join('; ')}`, {
      details: unique,
    });
  };
}

const registerShape = compile<s.RegisterPinBody>(s.registerPinSchema);

export const validate = {
  registerPin(body: unknown): s.RegisterPinBody {
    const v = registerShape(body);
    if (v.emojiString !== undefined && !isEmojiString(v.emojiString)) {
      const details = [{ field: 'emojiString', message: `must be 1 to ${MAX_EMOJI} emoji and nothing else` }];
      throw new AppError('VALIDATION_ERROR', `Invalid data: emojiString ${details[0]!.message}`, { details });
    }
    return v;
  },
  checkLogin: compile<s.CheckLoginBody>(s.checkLoginSchema),
  cancelAuth: compile<s.CancelAuthBody>(s.cancelAuthSchema),
  refresh: compile<s.RefreshBody>(s.refreshSchema),
  logout: compile<s.LogoutBody>(s.logoutSchema),
  sendMessage: compile<s.SendMessageBody>(s.sendMessageSchema),
  sessionParams: compile<s.SessionParams>(s.sessionParamsSchema),
  messageIdParams: compile<s.MessageIdParams>(s.messageIdParamsSchema),
};

/** A validator for a body schema kept beside its feature (accounts/schemas.ts): the same errors as the rest. */
export function bodyValidator<T>(schema: object): (body: unknown) => T {
  return compile<T>(schema);
}
