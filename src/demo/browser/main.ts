/**
 * The login page's script (bundled by esbuild into dist/demo/app.js), for `/` and the OpenID
 * interaction alike: gets a code from its flow (flows.ts), shows it (view.ts), follows it to an
 * end. An expired code is replaced by a new one at once while the page is in view (a few times
 * in a row; then the person asks for one), so a stale code is never left on screen.
 */
import type { LoginData } from '../page.js';
import { fillText } from '../texts.js';
import { type Attempt, flowOf, type Progress } from './flows.js';
import { LoginView } from './view.js';

/** new codes drawn without the person doing anything, before the page waits for them */
const AUTO_RENEWALS = 3;

const data = JSON.parse(document.getElementById('login-data')!.textContent ?? '{}') as LoginData;
const texts = data.texts;
const flow = flowOf(data.flow, texts);
const view = new LoginView(texts, new Set(data.pictured));
let renewals = 0;

async function run(renewing: boolean): Promise<void> {
  view.showLogin();
  view.clearCode();
  view.status(renewing ? 'renewing' : 'starting');
  let attempt: Attempt;
  try {
    attempt = await flow.next();
  } catch (err) {
    view.status('error', fillText(texts.cannotStart, { reason: err instanceof Error ? err.message : String(err) }));
    return;
  }
  view.showCode(attempt);
  view.status('waiting', renewing ? texts.renewed : undefined);
  // a change only: a flow may repeat the state it is in (a listener hears the current one, a poll
  // answers "pending" again), which would replace the words a renewed code is shown with
  let progress: Progress = 'waiting';
  attempt.onProgress((p) => {
    if (p === progress) return;
    progress = p;
    view.status(p);
  });
  const outcome = await attempt.outcome;
  view.stopCountdown();
  switch (outcome.kind) {
    case 'signed-in':
      renewals = 0;
      view.signedIn(outcome.profile);
      document.getElementById('signout')!.onclick = async () => {
        await outcome.signOut();
        await run(false);
      };
      return;
    case 'redirect':
      view.status('redirecting');
      location.assign(outcome.to);
      return;
    case 'error':
      view.clearCode();
      view.status('error', outcome.message);
      return;
    case 'ended':
      view.clearCode();
      if (outcome.status === 'expired' && renewals < AUTO_RENEWALS && document.visibilityState === 'visible') {
        renewals += 1;
        await run(true);
        return;
      }
      if (outcome.backTo) view.backTo(outcome.backTo);
      view.status(outcome.status);
  }
}

document.getElementById('restart')!.addEventListener('click', () => {
  renewals = 0;
  void run(false);
});
void run(false);
