/**
 * The login page's components over the markup of src/demo/page.ts: the code (large), its QR
 * code and wa.me link, the countdown, the status line, and the actions an end offers. The
 * current state is `#app[data-status]` (what the tests and the styles key on).
 */
import { renderSVG } from 'uqr';
import type { Profile } from '@pin-auth/client';
import { emojiHtml } from '../emoji.js';
import { fillText, type ScriptTexts } from '../texts.js';
import type { Attempt, Progress } from './flows.js';

export type Shown = Progress | 'starting' | 'renewing' | 'signed-in' | 'redirecting' | 'expired' | 'denied' | 'failed' | 'error';

const TEXT: Record<Exclude<Shown, 'error'>, keyof ScriptTexts> = {
  starting: 'starting',
  renewing: 'renewing',
  waiting: 'waiting',
  'awaiting-confirmation': 'awaitingConfirmation',
  'signed-in': 'signedIn',
  redirecting: 'redirecting',
  expired: 'expired',
  denied: 'denied',
  failed: 'failed',
};
const TONE: Partial<Record<Shown, 'good' | 'bad'>> = { 'signed-in': 'good', redirecting: 'good', expired: 'bad', denied: 'bad', failed: 'bad', error: 'bad' };
const ENDS = new Set<Shown>(['expired', 'denied', 'failed', 'error']);

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** `2:05` */
const minutes = (s: number): string => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;

export class LoginView {
  private readonly app = $('app');
  private timer: ReturnType<typeof setInterval> | undefined;
  private codes = 0;

  /** `pictured`: the emoji with a picture of ours (src/demo/emoji.ts) */
  constructor(
    private readonly texts: ScriptTexts,
    private readonly pictured: ReadonlySet<string>,
  ) {}

  /** Shows a state; `text` replaces its usual words (errors, a renewed code). */
  status(shown: Shown, text?: string): void {
    this.app.dataset.status = shown;
    const el = $('status');
    el.textContent = text ?? (shown === 'error' ? '' : this.texts[TEXT[shown]]);
    el.className = `status${TONE[shown] ? ` ${TONE[shown]}` : ''}`;
    const ended = ENDS.has(shown);
    const live = shown === 'waiting' || shown === 'awaiting-confirmation';
    // at an end no code is left on screen, nor the words about sending one
    $('emoji').hidden = ended;
    document.querySelector<HTMLElement>('.hint')!.hidden = !live;
    $('wa').hidden = !live;
    $('qr').hidden = !live;
    $('countdown-line').hidden = !live || this.timer === undefined;
    $('restart').hidden = !ended || !$('back').hidden;
    if (ended) ($('back').hidden ? $('restart') : $('back')).focus();
  }

  /** No code on screen (a stale one is never left showing). */
  clearCode(): void {
    this.stopCountdown();
    $('emoji').textContent = '…';
    $('back').hidden = true;
  }

  showCode(a: Attempt): void {
    this.codes += 1;
    this.app.dataset.codes = String(this.codes);
    $('emoji').innerHTML = emojiHtml(a.emojiString, this.pictured);
    const wa = $<HTMLAnchorElement>('wa');
    wa.href = a.waLink;
    wa.setAttribute('aria-label', fillText(this.texts.openWhatsAppWith, { text: a.text }));
    $<HTMLImageElement>('qr').src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(a.waLink, { border: 2 }))}`;
    this.countdown(a.expiresIn);
  }

  /** The code's time left, once a second (a timer role: read on request, never announced each tick). */
  private countdown(seconds: number): void {
    this.stopCountdown();
    if (!(seconds > 0)) return; // a lifetime we were not told: no countdown rather than a wrong one
    const ends = Date.now() + seconds * 1000;
    const tick = (): void => {
      const left = Math.max(0, Math.ceil((ends - Date.now()) / 1000));
      $('countdown').textContent = minutes(left);
      if (left === 0) this.stopCountdown();
    };
    tick();
    this.timer = setInterval(tick, 1000);
  }

  stopCountdown(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** An end whose way on is back to the app (a declined OpenID sign-in). */
  backTo(url: string): void {
    const back = $<HTMLAnchorElement>('back');
    back.href = url;
    back.hidden = false;
  }

  signedIn(p: Profile): void {
    this.status('signed-in');
    $('who').textContent = [p.name, p.surname].filter(Boolean).join(' ');
    $('p-name').textContent = p.name;
    $('p-surname').textContent = p.surname || '–';
    $('p-phone').textContent = p.phone ?? '–';
    $('p-roles').textContent = p.roles.join(', ');
    $('login').hidden = true;
    $('profile').hidden = false;
    $('profile-title').focus();
  }

  showLogin(): void {
    $('login').hidden = false;
    const profile = document.getElementById('profile');
    if (profile) profile.hidden = true;
  }
}
