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
 * tests never download a browser of their own: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1), with a
 * colour emoji font so screenshots show the codes. Returns why it can't when it can't.
 */
export function ensureChromium(): string | undefined {
  return ensureDebianPackages([CHROMIUM, '/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf'], ['chromium', 'fonts-noto-color-emoji']);
}

/** `extraArgs`: more Chromium switches (e.g. `--host-resolver-rules` for pages on made-up hosts). */
export async function launch(extraArgs: string[] = []): Promise<Browser> {
  process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
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
    const axe = (window as unknown as { axe: { run(ctx: Document): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
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
