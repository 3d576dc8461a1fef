import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * One person, one phone string: the canonical E.164 form of a number a gateway gives, so that
 * WhatsApp's two spellings of one Mexican or Argentinian mobile reach one account.
 *
 * - Mexico: WhatsApp (Baileys JIDs, the Cloud API's `wa_id`) still writes mobiles with the `1`
 *   Mexico dropped in 2019 (`521` + 10 digits); the number is `52` + the same 10 digits.
 * - Argentina: mobiles are `549` + 10 digits in E.164 and in WhatsApp's JIDs, and some gateways
 *   and people write them without the `9`; a local number is either a mobile or a landline,
 *   so `54` + 10 digits whose `549` form is a valid mobile is that mobile.
 * Anything else is the gateway's digits as they are (WhatsApp vouches for them; test numbers
 * such as +1 555 are not "valid" to libphonenumber yet are real senders).
 */
const DIGITS = /^\d{7,15}$/;
const MX_LEGACY_MOBILE = /^521(\d{10})$/;
const AR_WITHOUT_NINE = /^54([1-8]\d{9})$/;

const isMobile = (e164: string): boolean => {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed?.isValid()) return false;
  const type = parsed.getType();
  return type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE';
};

/** `+digits` in canonical form, from digits with or without `+` (spaces and dashes allowed); null when it is no phone. */
export function canonicalPhone(raw: string): string | null {
  const digits = raw.replace(/[\s\-().]/g, '').replace(/^\+/, '');
  if (!DIGITS.test(digits)) return null;
  const mx = MX_LEGACY_MOBILE.exec(digits);
  if (mx && parsePhoneNumberFromString(`+52${mx[1]}`)?.isValid()) return `+52${mx[1]}`;
  const ar = AR_WITHOUT_NINE.exec(digits);
  if (ar && isMobile(`+549${ar[1]}`)) return `+549${ar[1]}`;
  return `+${digits}`;
}
