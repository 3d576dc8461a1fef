import { createHmac, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import jwt from 'jsonwebtoken';
import { ConfigError, loadConfig, type Config } from '../src/config.js';

/**
 * `npm run simulate -- --gateway evolution|cloud --from +5511999998888 "PIN: 🍎🚀🐱"`
 *
 * Posts the webhook a gateway would post for a chat message, to a running service, so anyone can
 * try a login without a phone. It reads the same environment as the service and authenticates
 * as the gateway would with what is configured: Cloud API with the `X-Hub-Signature-256`
 * signature (WEBHOOK_SECRET); Evolution with its JWT (WEBHOOK_JWT_KEY), else the static bearer
 * key (WEBHOOK_BEARER_KEY), else the secret path segment (WEBHOOK_PATH_SECRET), else a signature.
 * The message comes on the default channel's instance or number unless told otherwise.
 * It prints the service's answer, never a secret.
 */
const HELP = `usage: npm run simulate -- [--gateway evolution|cloud] --from +<phone> [options] "<text>"
  --gateway               default: MESSAGING_PROVIDER's (cloud), else evolution
  --url <base>            the service (default http://127.0.0.1:$PORT, PORT default 3000)
  --instance <name>       Evolution instance (default: the first configured, else "main")
  --phone-number-id <id>  Cloud API business number id (default: the first configured, else 1)
  --name <name>           the sender's display name (default "Simulated User")
  --by-events             post to /messaging-endpoint/messages-upsert, as Evolution's by-events mode
  --user-id <bsuid>       Cloud API: a username-only sender (business-scoped id, no phone)`;

interface Options {
  gateway: 'evolution' | 'cloud';
  from: string | undefined;
  userId: string | undefined;
  text: string;
  url: string;
  instance: string;
  phoneNumberId: string;
  name: string;
  byEvents: boolean;
}

function options(argv: string[], config: Config): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      gateway: { type: 'string' },
      from: { type: 'string' },
      url: { type: 'string' },
      instance: { type: 'string' },
      'phone-number-id': { type: 'string' },
      name: { type: 'string', default: 'Simulated User' },
      'by-events': { type: 'boolean', default: false },
      'user-id': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  // the gateway the service is configured for, unless told: its reply then goes out the same way
  const gateway = values.gateway ?? (config.messagingProvider === 'cloud' ? 'cloud' : 'evolution');
  if (values.help || positionals.length !== 1 || (gateway !== 'evolution' && gateway !== 'cloud')) throw new Usage();
  if (values.from !== undefined && !/^\+[1-9]\d{6,14}$/.test(values.from)) throw new Usage('--from must be + and 7 to 15 digits');
  if (values.from === undefined && (gateway !== 'cloud' || values['user-id'] === undefined)) throw new Usage('--from is required (or, for cloud, --user-id)');
  return {
    gateway,
    from: values.from,
    userId: values['user-id'],
    text: positionals[0]!,
    url: (values.url ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, ''),
    instance: values.instance ?? config.evolution.instances[0] ?? 'main',
    phoneNumberId: values['phone-number-id'] ?? config.cloud.phoneNumberIds[0] ?? '1',
    name: values.name,
    byEvents: values['by-events'],
  };
}

class Usage extends Error {}

const now = (): number => Math.floor(Date.now() / 1000);

/** An Evolution API 2.x `messages.upsert` event. */
function evolutionBody(o: Options): object {
  return {
    event: 'messages.upsert',
    instance: o.instance,
    data: {
      key: { remoteJid: `${o.from!.slice(1)}@s.whatsapp.net`, fromMe: false, id: `SIM${randomBytes(8).toString('hex').toUpperCase()}` },
      pushName: o.name,
      message: { conversation: o.text },
      messageType: 'conversation',
      messageTimestamp: now(),
    },
    date_time: new Date().toISOString(),
    sender: 'simulated@s.whatsapp.net',
  };
}

/** A WhatsApp Cloud API `messages` notification. */
function cloudBody(o: Options): object {
  const from = o.from?.slice(1);
  const contact = { profile: { name: o.name }, ...(from ? { wa_id: from } : {}), ...(o.userId ? { user_id: o.userId } : {}) };
  const message = {
    ...(from ? { from } : {}),
    ...(o.userId ? { from_user_id: o.userId } : {}),
    id: `wamid.SIM${randomBytes(12).toString('base64url')}`,
    timestamp: String(now()),
    type: 'text',
    text: { body: o.text },
  };
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '0',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '0', phone_number_id: o.phoneNumberId },
              contacts: [contact],
              messages: [message],
            },
          },
        ],
      },
    ],
  };
}

/** The path and headers the gateway would use, with the service's configured credentials. */
function credentials(o: Options, config: Config, raw: string): { path: string; headers: Record<string, string>; method: string } {
  const suffix = o.byEvents ? '/messages-upsert' : '';
  const signature = (secret: string): string => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  if (o.gateway === 'cloud') {
    return config.webhookSecret
      ? { path: '', headers: { 'x-hub-signature-256': signature(config.webhookSecret) }, method: 'X-Hub-Signature-256' }
      : { path: '', headers: {}, method: 'none (open webhook)' };
  }
  if (config.webhookJwtKey) {
    const iat = now();
    const token = jwt.sign({ iat, exp: iat + 600, app: 'evolution', action: 'webhook' }, config.webhookJwtKey, { algorithm: 'HS256' });
    return { path: suffix, headers: { authorization: `Bearer ${token}` }, method: 'Evolution JWT (jwt_key)' };
  }
  if (config.webhookBearerKey) return { path: suffix, headers: { authorization: `Bearer ${config.webhookBearerKey}` }, method: 'static bearer key' };
  if (config.webhookPathSecret) return { path: `/${config.webhookPathSecret}${suffix}`, headers: {}, method: 'secret path segment' };
  if (config.webhookSecret) return { path: suffix, headers: { 'x-hub-signature-256': signature(config.webhookSecret) }, method: 'X-Hub-Signature-256' };
  return { path: suffix, headers: {}, method: 'none (open webhook)' };
}

async function main(): Promise<number> {
  const config = loadConfig(process.env);
  const o = options(process.argv.slice(2), config);
  const raw = JSON.stringify(o.gateway === 'evolution' ? evolutionBody(o) : cloudBody(o));
  const { path, headers, method } = credentials(o, config, raw);
  const res = await fetch(`${o.url}/messaging-endpoint${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
    signal: AbortSignal.timeout(10_000),
  });
  const answer = await res.text();
  // the path as the service logs it: the secret segment never printed
  const shown = config.webhookPathSecret ? path.replace(config.webhookPathSecret, ':secret') : path;
  console.log(`${o.gateway} webhook → ${o.url}/messaging-endpoint${shown} (auth: ${method})`);
  console.log(`${res.status} ${answer}`);
  return res.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof Usage) console.error((err.message ? `${err.message}\n` : '') + HELP);
    else if (err instanceof ConfigError) console.error(`configuration: ${err.message}`);
    else console.error(`simulate failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);
