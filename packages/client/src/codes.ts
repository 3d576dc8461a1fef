/** A curated set of emoji that look distinct at a glance and exist on every phone (single code points, no ZWJ, no skin tones). */
const EMOJI = [...'🍎🍌🍇🍉🍒🍋🥝🍍🥕🌽🍄🌵🌻🌙⭐🔥🌈⚡🎈🎁🎸🎲🚀🚲⚓🔑🔔📷💡📚🐱🐶🦊🐼🐨🐯🦁🐸🐵🐧🦉🐝🦋🐢🐙🐳🦀🦄'];

function randomBytes(n: number): Uint8Array {
  const bytes = new Uint8Array(n);
  globalThis.crypto.getRandomValues(bytes);
  return bytes;
}

/** `length` emoji drawn uniformly from the set (rejection sampling: no modulo bias). */
export function randomEmojiString(length = 4): string {
  const out: string[] = [];
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (out.length < length && b < 256 - (256 % EMOJI.length)) out.push(EMOJI[b % EMOJI.length]!);
    }
  }
  return out.join('');
}

/** 128 random bits, base64url. */
function random128(): string {
  let s = '';
  for (const b of randomBytes(16)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A PIN of 128 random bits, base64url (the service's PIN rule: 4 to 128 printable ASCII characters). */
export const randomPin = (): string => `p-${random128()}`;

/** An Idempotency-Key for one registration attempt (1 to 255 printable ASCII characters). */
export const randomKey = (): string => `k-${random128()}`;

/** The text the person sends. */
export const chatText = (emojiString: string): string => `PIN: ${emojiString}`;

/** `https://wa.me/<digits>?text=…`: opens WhatsApp with the message typed in, ready to send. */
export function waLink(whatsappNumber: string | undefined, text: string): string | undefined {
  if (!whatsappNumber) return undefined;
  const digits = whatsappNumber.replace(/[^0-9]/g, '');
  return `https://wa.me/${digits}?text=${encodeURIComponent(text)}`;
}
