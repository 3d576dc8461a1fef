import http from 'node:http';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { chromiumOrSkip, launch } from '../demo/browser.js';
import type { Stack } from '../helpers/processes.js';
import { eventually } from '../helpers/http.js';
import { testRedis } from '../helpers/redis.js';
import { startProductionOidc } from './production-stack.js';
import { type Chat, RelyingParty } from './relying-party.js';

const BUDGET = 30;

/** Redis keys of stored sign-ins (the provider's Interaction records) under the stack's prefix. */
async function interactions(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:oidc:Interaction:*`, 'COUNT', 1000);
    cursor = next;
    n += found.length;
  } while (cursor !== '0');
  return n;
}

/**
 * Round 4 (issue 48): any web page can embed `<img src=".../oidc/auth?...">` thirty times; each
 * load was a sign-in stored and charged to its visitor's network, which then could not sign in
 * for a minute. In Chromium against production settings (RATE_OIDC_AUTHORIZE_PER_MINUTE=30):
 * the images store and spend nothing, and the visitor's real navigation still opens the page.
 */
describe('oidc: cross-site subresource loads of /oidc/auth spend no sign-in budget (Chromium)', function () {
  this.timeout(120000);
  let stack: Stack;
  let rp: RelyingParty;
  let browser: Browser;
  let redis: Redis;
  let evil: http.Server;
  let evilUrl: string;

  before(async function () {
    chromiumOrSkip(this);
    let issuer: string;
    let chat: Chat;
    ({ stack, issuer, chat } = await startProductionOidc('oidc-subresource', { RATE_OIDC_AUTHORIZE_PER_MINUTE: String(BUDGET) }));
    rp = await RelyingParty.discover(issuer, chat);
    redis = testRedis();
    // the attacker's page, on another site (127.0.0.1 against the issuer's localhost)
    const images = await Promise.all(Array.from({ length: BUDGET }, async () => (await rp.authorize()).url));
    evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>cats</title>${images.map((src) => `<img src="${src.replace(/&/g, '&amp;')}" alt="">`).join('')}`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as { port: number }).port}/`;
    browser = await launch();
  });
  after(async function () {
    await browser?.close();
    evil?.close();
    redis?.disconnect();
    await stack?.stop();
  });

  it(`${BUDGET} <img> loads of /oidc/auth store no sign-in and leave the budget: the visitor's navigation opens the page`, async function () {
    const page = await browser.newPage();
    // each image's request, once it ended (its answer, or the browser's block: ORB hides a JSON answer from an image)
    const answers: string[] = [];
    page.on('requestfinished', (r) => {
      if (r.url().includes('/oidc/auth')) void r.response().then((res) => answers.push(String(res?.status())));
    });
    page.on('requestfailed', (r) => {
      if (r.url().includes('/oidc/auth')) answers.push(r.failure()?.errorText ?? 'failed');
    });
    await page.goto(evilUrl, { waitUntil: 'load' });
    // the page's load waited for the images; their events reach this process a moment later
    await eventually(async () => (answers.length >= BUDGET ? true : undefined), 10000, 50);
    expect(answers, 'every image was requested').to.have.length(BUDGET);
    const stored = await interactions(redis, stack.prefix);

    // the same browser, same network, a real sign-in: the page with its chat code
    const opened = await page.goto((await rp.authorize()).url);
    expect(opened?.status(), page.url()).to.equal(200);
    expect(page.url()).to.match(/\/oidc\/interaction\/[^/]+$/);
    expect(await page.locator('#emoji').textContent()).to.match(/\S/);
    // the images stored nothing (each was refused 403 unread); the navigation stored its sign-in
    expect(stored).to.equal(0);
    expect(await interactions(redis, stack.prefix)).to.equal(1);
    await page.close();
  });
});
