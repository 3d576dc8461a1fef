import { freePort, startStack, type Stack } from '../helpers/processes.js';
import { chatTo, testClient, type Chat } from './relying-party.js';

export const WEBHOOK_SECRET = 'oidc-suite-webhook-secret-of-32-bytes!';

/**
 * A web node and a worker under production settings (NODE_ENV=production, a signed webhook, a
 * configured issuer) with the test client: the issuer names the web node's own port, so the node
 * is started on a port chosen here.
 */
export async function startProductionOidc(
  name: string,
  env: Record<string, string> = {},
): Promise<{ stack: Stack; base: string; issuer: string; port: number; chat: Chat }> {
  const port = await freePort();
  const issuer = `http://localhost:${port}/oidc`;
  const stack = await startStack({
    name,
    webs: 0,
    env: {
      NODE_ENV: 'production',
      JWT_SECRET: 'oidc-suite-production-like-secret-0123456789',
      WEBHOOK_SECRET,
      CHAT_REPLIES: 'false',
      OIDC_CLIENTS: JSON.stringify([testClient()]),
      OIDC_ISSUER: issuer,
      ...env,
    },
  });
  try {
    await stack.addWeb({ PORT: String(port), INSTANCE_NAME: `web-${port}` });
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const base = `http://127.0.0.1:${port}`;
  return { stack, base, issuer, port, chat: chatTo(base, WEBHOOK_SECRET) };
}
