import { expect } from 'chai';
import fc from 'fast-check';
import { brandCss, contrast } from '../../src/demo/brand.js';

const hex = fc.integer({ min: 0, max: 0xffffff }).map((n) => `#${n.toString(16).padStart(6, '0')}`);
const vars = (css: string): Record<string, string> => Object.fromEntries([...css.matchAll(/(--[a-z-]+):(#[0-9a-f]{6})/gi)].map((m) => [m[1]!, m[2]!]));

/** src/demo/brand.ts: whatever colours a client registers, every text on the page reads at 4.5:1. */
describe('demo unit: brand colours', function () {
  it('the contrast formula gives WCAG values (21:1 black on white, 1:1 the same colour)', function () {
    expect(contrast('#000000', '#ffffff')).to.be.closeTo(21, 0.01);
    expect(contrast('#777777', '#777777')).to.equal(1);
    expect(contrast('#075e54', '#ffffff')).to.be.above(4.5);
  });

  it('the service look has no overrides', function () {
    expect(brandCss({ name: 'pin-auth' })).to.equal('');
  });

  it('any background and brand colour: text, muted text, statuses and links reach 4.5:1 on the background, button text on the button', function () {
    fc.assert(
      fc.property(hex, hex, (background, colour) => {
        const v = vars(brandCss({ name: 'x', colour, background }));
        expect(v['--bg']).to.equal(background);
        expect(v['--accent']).to.equal(colour);
        for (const k of ['--fg', '--muted', '--bad', '--good', '--link']) expect(contrast(v[k]!, background), `${k} on ${background}`).to.be.at.least(4.5);
        expect(contrast(v['--on-accent']!, colour), `button text on ${colour}`).to.be.at.least(4.5);
      }),
      { numRuns: 500 },
    );
  });
});
