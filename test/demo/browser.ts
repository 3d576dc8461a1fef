import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDebianPackages } from '../helpers/debian.js';
import { ROOT } from '../helpers/processes.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'test-artifacts', 'screenshots');

/**
 * Debian's Chromium, installed with apt-get when missing (CI machines start without it; the
 * tests never download a browser of their own: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1). No emoji
 * font is installed: the login page brings its own pictures of the code's emoji, and the tests
 * check they are in colour where the system has none. Returns why it can't when it can't.
 */
export function ensureChromium(): string | undefined {
  return ensureDebianPackages([CHROMIUM], ['chromium']);
}

/** For a before hook: Chromium installed when missing (a first run may take minutes with apt-get), else the hook's tests skipped with the reason. */
export function chromiumOrSkip(ctx: Mocha.Context): void {
  ctx.timeout(900000);
  const missing = ensureChromium();
  if (missing) {
    console.warn(`skipping browser tests: ${missing}`);
    ctx.skip();
  }
}

/** `extraArgs`: more Chromium switches (e.g. `--host-resolver-rules` for pages on made-up hosts). */
export async function launch(extraArgs: string[] = []): Promise<Browser> {
  process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  });
}

export const shot = (name: string): string => path.join(SCREENSHOTS, `${name}.png`);

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's findings on the page as it is now (every rule it runs by default: WCAG 2.x A and AA,
 * best practices), one line each. Evaluated through the DevTools protocol, so the page's own
 * Content-Security-Policy stays on.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(ctx: Document): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown[] }[] }[] }> } }
    ).axe;
    const r = await axe.run(document);
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  });
  return found;
}

/**
 * A page's problems, as lines: console errors (CSP violations are), page errors, failed requests,
 * and 4xx/5xx answers to anything but the API calls the client makes (a 410 PIN_EXPIRED to a
 * check after expiry is an answer it expects; the browser logs those as "Failed to load resource").
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    // a navigation away (the app's callback) aborts the polls in flight: not a problem of the page
    if (!/ERR_ABORTED/.test(r.failure()?.errorText ?? '')) problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    const api = ['fetch', 'xhr'].includes(r.request().resourceType());
    if (r.status() >= 400 && !api) problems.push(`${r.status()}: ${r.url()}`);
  });
  return problems;
}

/**
 * Every request the page makes outside `origins` (data: and blob: URLs are the page's own), as
 * lines: what a page of ours must never do (fonts, scripts, styles from a third party).
 */
export function watchForeignRequests(page: Page, origins: string[]): string[] {
  const foreign: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && !origins.includes(url.origin)) foreign.push(`${r.resourceType()} ${r.url()}`);
  });
  return foreign;
}

/** One emoji of the code as drawn on screen: the share of its box in colour, and of its box inked at all. */
export interface EmojiPixels {
  emoji: string;
  /** pixels whose channels differ by 16 or more (a grey, black or white pixel has them equal) */
  coloured: number;
  /** pixels darker than near-white */
  inked: number;
}

/**
 * The code's emoji (`#emoji .e`) as Chromium painted them: a screenshot of `#emoji`, read back
 * pixel by pixel in the page (a canvas), each emoji's box on its own. A black-and-white outline
 * (a system font without colour emoji) has no coloured pixel; a missing picture no ink.
 */
export async function emojiPixels(page: Page): Promise<EmojiPixels[]> {
  // the pictures load after the code is shown: each one decoded (from the cache), then two frames for the paint
  await page.evaluate(async () => {
    const urls = [...document.querySelectorAll<HTMLElement>('#emoji .e')].map((e) => /url\("(.*)"\)/.exec(getComputedStyle(e).backgroundImage)?.[1] ?? '');
    await Promise.all(urls.map((u) => Object.assign(new Image(), { src: u }).decode()));
    for (let i = 0; i < 2; i++) await new Promise(requestAnimationFrame);
  });
  const png = (await page.locator('#emoji').screenshot()).toString('base64');
  return page.evaluate(async (data) => {
    const holder = document.getElementById('emoji')!.getBoundingClientRect();
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    [canvas.width, canvas.height] = [img.width, img.height];
    const g = canvas.getContext('2d', { willReadFrequently: true })!;
    g.drawImage(img, 0, 0);
    const scale = img.width / holder.width;
    return [...document.querySelectorAll<HTMLElement>('#emoji .e')].map((e) => {
      const r = e.getBoundingClientRect();
      const [x, y] = [Math.round((r.left - holder.left) * scale), Math.round((r.top - holder.top) * scale)];
      const [w, h] = [Math.max(1, Math.round(r.width * scale)), Math.max(1, Math.round(r.height * scale))];
      const px = g.getImageData(x, y, w, h).data;
      let [coloured, inked] = [0, 0];
      for (let i = 0; i < px.length; i += 4) {
        const [red, green, blue] = [px[i]!, px[i + 1]!, px[i + 2]!];
        if (Math.max(red, green, blue) - Math.min(red, green, blue) >= 16) coloured++;
        if (Math.min(red, green, blue) < 230) inked++;
      }
      const n = px.length / 4;
      return { emoji: e.textContent ?? '', coloured: coloured / n, inked: inked / n };
    });
  }, png);
}
