import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
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
