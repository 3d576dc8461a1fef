/** The OpenID sign-in page: the code to send in the chat, a link that opens the chat with it, and a status line. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface LoginPage {
  emoji: string;
  /** the message to send, `PIN: <emoji>` */
  text: string;
  waLink: string;
  statusUrl: string;
  clientName: string;
  nonce: string;
}

export function renderLoginPage(p: LoginPage): string {
  const data = JSON.stringify({ statusUrl: p.statusUrl }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in with WhatsApp</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;text-align:center}
#code{font-size:2.5rem;letter-spacing:.2rem;margin:1rem 0}a.button{display:inline-block;padding:.8rem 1.2rem;background:#25d366;color:#fff;border-radius:.5rem;text-decoration:none}</style>
</head><body><main>
<h1>Sign in to ${escapeHtml(p.clientName)}</h1>
<p>Send this message to us on WhatsApp:</p>
<p id="code" data-emoji="${escapeHtml(p.emoji)}" data-text="${escapeHtml(p.text)}">${escapeHtml(p.text)}</p>
<p><a class="button" id="wa-link" href="${escapeHtml(p.waLink)}">Open WhatsApp</a></p>
<p id="status" role="status">Waiting for your message…</p>
</main>
<script nonce="${p.nonce}">
const { statusUrl } = ${data};
const status = document.getElementById('status');
async function poll() {
  try {
    const res = await fetch(statusUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } });
    const body = await res.json();
    if (body.redirectTo) { status.textContent = 'Signed in.'; location.assign(body.redirectTo); return; }
    if (body.state === 'restart') { location.reload(); return; }
    if (body.state === 'awaiting-confirmation') status.textContent = 'Please confirm the sign-in in the chat.';
  } catch { /* retried below */ }
  setTimeout(poll, 1000);
}
setTimeout(poll, 1000);
</script>
</body></html>`;
}
