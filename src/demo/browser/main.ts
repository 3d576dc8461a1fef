/**
 * The login page's script (bundled by esbuild into dist/demo/app.js): starts a login with the
 * typed client, shows the code, its QR code and wa.me link, follows the status, then shows the
 * profile with a sign-out button.
 */
import { renderSVG } from 'uqr';
import { PinAuthClient, type LoginAttempt, type LoginStatus, type Session } from '@pin-auth/client';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const app = $('app');
const client = new PinAuthClient({ baseUrl: location.origin, whatsappNumber: app.dataset.whatsapp || undefined });

const MESSAGES: Record<LoginStatus, { text: string; tone?: 'good' | 'bad' }> = {
  waiting: { text: 'Waiting for your message…' },
  'awaiting-confirmation': { text: 'Message received. Please confirm the login in WhatsApp.' },
  'signed-in': { text: 'Signed in.', tone: 'good' },
  expired: { text: 'This code has expired. Get a new code to try again.', tone: 'bad' },
  denied: { text: 'The login was declined in WhatsApp.', tone: 'bad' },
  failed: { text: 'The login could not be completed. Get a new code to try again.', tone: 'bad' },
  cancelled: { text: 'Cancelled.' },
};

let attempt: LoginAttempt | undefined;

function showStatus(status: LoginStatus | 'starting' | 'error', text?: string): void {
  app.dataset.status = status;
  const el = $('status');
  const m = status === 'starting' || status === 'error' ? { text: text ?? '', tone: status === 'error' ? ('bad' as const) : undefined } : MESSAGES[status];
  el.textContent = text ?? m.text;
  el.className = `status${m.tone ? ' ' + m.tone : ''}`;
  const ended = status === 'expired' || status === 'denied' || status === 'failed' || status === 'error';
  $('restart').hidden = !ended;
  $('wa').hidden = ended || status === 'starting';
  $('qr').hidden = ended || status === 'starting';
  if (ended) $('restart').focus();
}

async function start(): Promise<void> {
  $('login').hidden = false;
  $('profile').hidden = true;
  $('emoji').textContent = '…';
  showStatus('starting', 'Preparing a code…');
  try {
    attempt = await client.startLogin();
  } catch (err) {
    showStatus('error', `Could not start a login: ${(err as Error).message}`);
    return;
  }
  const a = attempt;
  $('emoji').textContent = a.emojiString;
  // without a configured number, wa.me lets the person pick the chat
  const link = a.waLink ?? `https://wa.me/?text=${encodeURIComponent(a.text)}`;
  const wa = $<HTMLAnchorElement>('wa');
  wa.href = link;
  wa.setAttribute('aria-label', `Open WhatsApp with the message ${a.text} typed in`);
  $<HTMLImageElement>('qr').src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(renderSVG(link, { border: 2 }));
  showStatus(a.status);
  a.onStatus((s) => showStatus(s));
  a.session.then(signedIn, () => undefined);
}

async function signedIn(session: Session): Promise<void> {
  const profile = await client.profile(session).catch(() => ({ ...session.user, surname: '' }));
  $('who').textContent = [profile.name, profile.surname].filter(Boolean).join(' ');
  $('p-name').textContent = profile.name;
  $('p-surname').textContent = profile.surname || '–';
  $('p-phone').textContent = profile.phone ?? '–';
  $('p-roles').textContent = profile.roles.join(', ');
  $('login').hidden = true;
  $('profile').hidden = false;
  app.dataset.status = 'signed-in';
  $('profile-title').focus();
  $('signout').onclick = async () => {
    await client.logout(session).catch(() => undefined);
    await start();
  };
}

$('restart').addEventListener('click', () => void start());
void start();
