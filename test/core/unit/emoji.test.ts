import { expect } from 'chai';
import { emojiFromChat } from '../../../src/chat/pin-text.js';
import { emojiClusters, emojiHash, isEmojiString, normaliseEmoji } from '../../../src/registrations/emoji.js';

/** Emoji strings: what counts as one, how both sides of a match are normalised. */
describe('core unit: emoji strings', function () {
  it('accepts emoji of every kind, 1 to 16 of them', function () {
    for (const s of ['🍎', '❤️', '❤', '🇧🇷', '👨‍👩‍👧', '1️⃣', '#️⃣', '👍🏽', '🏳️‍🌈', '🍎 🚀 🐱', '🍎'.repeat(16)]) {
      expect(isEmojiString(s), s).to.equal(true);
    }
  });

  it('refuses anything else', function () {
    for (const s of ['', ' ', 'a', '1', '🍎a', 'a🍎', '🍎'.repeat(17), '\uFE0F', '\u200D', '\uD83C', '🍎\n.', 'PIN: 🍎']) {
      expect(isEmojiString(s), JSON.stringify(s)).to.equal(false);
    }
  });

  it('normalises VS16 and whitespace away, so ❤️ and ❤ are one string', function () {
    expect(normaliseEmoji('❤️ 🍎\t🚀')).to.equal('❤🍎🚀');
    expect(emojiHash('❤️🍎')).to.equal(emojiHash('❤ 🍎'));
    expect(emojiHash('🍎🚀')).to.not.equal(emojiHash('🚀🍎'));
    expect(emojiHash('👍🏽')).to.not.equal(emojiHash('👍'));
  });

  it('reads `PIN: <emoji>` (any case, spaces around the colon) or the bare emoji string from a chat', function () {
    expect(emojiFromChat('PIN: 🍎🚀')).to.equal('🍎🚀');
    expect(emojiFromChat('pin:🍎🚀')).to.equal('🍎🚀');
    expect(emojiFromChat('  Pin  :  🍎 🚀 ')).to.equal('🍎 🚀 ');
    expect(emojiFromChat('🍎🚀')).to.equal('🍎🚀');
    for (const s of ['PIN: abc', 'PIN:', 'PIN 🍎', 'my PIN: 🍎', 'hello', '🍎'.repeat(17)]) {
      expect(emojiFromChat(s), s).to.equal(null);
    }
  });

  it('splits into the grapheme clusters Intl.Segmenter finds, on its fast path too', function () {
    const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
    const clusters = (t: string): string[] => [...segmenter.segment(t.normalize('NFC').replace(/\s+/gu, ''))].map((s) => s.segment);
    const cases = ['🍎🚀🐱', '🍎 🚀', '©🍎', '👍🏽🍎', '🍎👍🏽', '🇧🇷🍎', '🍎🇧🇷🇺🇸', '❤️🍎', '👨‍👩‍👧🚀', '1️⃣🍎', '🏳️‍🌈'];
    for (const t of cases) expect(emojiClusters(t), t).to.deep.equal(clusters(t));
    // a skin tone glues onto whatever precedes it: apple + tone is one cluster, and no emoji
    expect(emojiClusters('🍎🏽')).to.equal(null);
    // a lone regional indicator pairs with the next one, never stands alone as an emoji
    expect(emojiClusters('🇧🍎')).to.equal(null);
    expect(emojiClusters('🍎a')).to.equal(null);
  });
});
