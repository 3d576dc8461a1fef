import { randomBytes } from 'node:crypto';
import http from 'node:http';

/**
 * Test bodies a gateway would post, and a mock gateway: a real HTTP server on loopback that
 * records what it receives and answers as told (status, headers, body, per request).
 */
export function evolutionMessage(opts: {
  text: string;
  phone?: string;
  id?: string;
  pushName?: string;
  fromMe?: boolean;
  remoteJid?: string;
  remoteJidAlt?: string;
  extended?: boolean;
  instance?: string;
}): Record<string, unknown> {
  const phone = (opts.phone ?? `+5511${String(Math.floor(1e8 + Math.random() * 9e8))}`).replace(/^\+/, '');
  const key: Record<string, unknown> = {
    remoteJid: opts.remoteJid ?? `${phone}@s.whatsapp.net`,
    fromMe: opts.fromMe ?? false,
    id: opts.id ?? randomBytes(10).toString('hex').toUpperCase(),
  };
  if (opts.remoteJidAlt !== undefined) key.remoteJidAlt = opts.remoteJidAlt;
  return {
    event: 'messages.upsert',
    instance: opts.instance ?? 'test-instance',
    data: {
      key,
      pushName: opts.pushName ?? 'Test Person',
      message: opts.extended ? { extendedTextMessage: { text: opts.text } } : { conversation: opts.text },
      messageType: opts.extended ? 'extendedTextMessage' : 'conversation',
      messageTimestamp: Math.floor(Date.now() / 1000),
    },
    date_time: new Date().toISOString(),
    sender: '5511000000000@s.whatsapp.net',
  };
}

/** A Cloud API `messages` webhook with one change whose value carries `fields` (messages, contacts, statuses). */
export function cloudWebhook(fields: Record<string, unknown>, phoneNumberId = '106540352242922'): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId }, ...fields },
          },
        ],
      },
    ],
  };
}

/** A Cloud API webhook carrying one message from `from` (digits, no +). */
function cloudInbound(from: string, name: string | undefined, message: Record<string, unknown>): Record<string, unknown> {
  return cloudWebhook({
    contacts: [{ profile: { name: name ?? 'Cloud Person' }, wa_id: from }],
    messages: [{ from, timestamp: String(Math.floor(Date.now() / 1000)), ...message }],
  });
}

const wamid = (): string => `wamid.${randomBytes(16).toString('base64url')}`;

export function cloudMessage(opts: { text: string; phone?: string; id?: string; name?: string }): Record<string, unknown> {
  const from = (opts.phone ?? `+1555${String(Math.floor(1e6 + Math.random() * 9e6))}`).replace(/^\+/, '');
  return cloudInbound(from, opts.name, { id: opts.id ?? wamid(), type: 'text', text: { body: opts.text } });
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: unknown;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface MockGateway {
  url: string;
  requests: RecordedRequest[];
  /** answers for the next requests, in order; after they run out, `fallback` */
  queue: Reply[];
  fallback: Reply;
  close(): Promise<void>;
}

export async function startMockGateway(): Promise<MockGateway> {
  const gw: Omit<MockGateway, 'url' | 'close'> = {
    requests: [],
    queue: [],
    fallback: { status: 201, body: { key: { id: `MOCK${randomBytes(6).toString('hex')}` }, status: 'PENDING' } },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* keep null */
      }
      gw.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json, at: Date.now() });
      const reply = gw.queue.shift() ?? gw.fallback;
      res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
      res.end(JSON.stringify(reply.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return Object.assign(gw, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as MockGateway;
}

/**
 * Fake gateways that check requests as the real ones do and answer in their shapes.
 * - Evolution API: `POST /message/sendText/<instance>`, `apikey` header, body `{number, text}`
 *   (`number`: digits, or a `<n>@lid` JID)
 *   (v2) or `{number, textMessage: {text}}` (v1); 401 for a wrong key, 404 for an unknown
 *   instance, 400 for a wrong body; 201 with the sent message (`key.id`).
 * - Graph API: `POST /<version>/<phone number id>/messages`, `Authorization: Bearer <token>`,
 *   `{messaging_product: "whatsapp", to | recipient, type: "text", text: {body}}`; 401 (code 190)
 *   for a wrong token, 400 (code 100) for an unknown number or a wrong body; 200 with `messages[0].id`.
 */
export interface FakeGateway extends MockGateway {
  /** requests the fake accepted (2xx), each with the id it answered */
  accepted: (RecordedRequest & { id: string })[];
}

async function fakeServer(route: (req: RecordedRequest) => { status: number; body: unknown; id?: string }): Promise<FakeGateway> {
  const gw = await startMockGateway();
  const accepted: FakeGateway['accepted'] = [];
  // the mock answers from its queue; a fake answers by looking at the request, so it installs a getter
  Object.defineProperty(gw, 'fallback', {
    get(): Reply {
      const req = gw.requests[gw.requests.length - 1]!;
      const answer = route(req);
      if (answer.status < 300 && answer.id) accepted.push({ ...req, id: answer.id });
      return { status: answer.status, body: answer.body };
    },
  });
  return Object.assign(gw, { accepted });
}

/** A fake Evolution whose WhatsApp socket can drop for a while. */
export interface FakeEvolution extends FakeGateway {
  /**
   * The next `sends` sends fail as Evolution answers them while Baileys' socket is down: every
   * send error becomes 400 Bad Request with `error.toString()` in `response.message`. With
   * `number`, only sends to that number fail (another test's late reply must not take the fault).
   */
  dropConnection(sends: number, error?: string, number?: string): void;
}

export async function startFakeEvolution(opts: { apiKey: string; instances: string[]; version?: 'v1' | 'v2' }): Promise<FakeEvolution> {
  const down: { sends: number; error: string; number: string | undefined } = { sends: 0, error: '', number: undefined };
  const gw = await fakeServer((req) => {
    const m = /^\/message\/sendText\/([^/?]+)$/.exec(req.url);
    if (req.method !== 'POST' || !m) return { status: 404, body: { status: 404, error: 'Not Found', response: { message: [`Cannot POST ${req.url}`] } } };
    if (req.headers.apikey !== opts.apiKey) return { status: 401, body: { status: 401, error: 'Unauthorized', response: { message: 'Unauthorized' } } };
    const instance = decodeURIComponent(m[1]!);
    if (!opts.instances.includes(instance))
      return { status: 404, body: { status: 404, error: 'Not Found', response: { message: [`The "${instance}" instance does not exist`] } } };
    const to = (req.json as { number?: unknown } | null)?.number;
    if (down.sends > 0 && (down.number === undefined || to === down.number)) {
      down.sends--;
      return { status: 400, body: { status: 400, error: 'Bad Request', response: { message: [down.error] } } };
    }
    const body = (req.json ?? {}) as { number?: unknown; text?: unknown; textMessage?: { text?: unknown } };
    const text = (opts.version ?? 'v2') === 'v1' ? body.textMessage?.text : body.text;
    // a number, or a chat JID as it is (Evolution's createJid keeps `…@lid`: a LID-only sender)
    if (typeof body.number !== 'string' || !/^(\d{7,15}|\d{1,32}@lid)$/.test(body.number) || typeof text !== 'string' || text === '') {
      return { status: 400, body: { status: 400, error: 'Bad Request', response: { message: ['instance requires property "text"'] } } };
    }
    const id = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
    const remoteJid = body.number.includes('@') ? body.number : `${body.number}@s.whatsapp.net`;
    return {
      status: 201,
      id,
      body: { key: { remoteJid, fromMe: true, id }, message: { conversation: text }, messageTimestamp: Math.floor(Date.now() / 1000), status: 'PENDING' },
    };
  });
  return Object.assign(gw, {
    dropConnection(sends: number, error = 'Error: Connection Closed', number?: string) {
      down.sends = sends;
      down.error = error;
      down.number = number;
    },
  });
}

export function startFakeGraph(opts: { token: string; phoneNumberIds: string[] }): Promise<FakeGateway> {
  const graphError = (status: number, code: number, message: string) => ({
    status,
    body: { error: { message, type: 'OAuthException', code, fbtrace_id: `A${randomBytes(4).toString('hex')}` } },
  });
  return fakeServer((req) => {
    const m = /^\/v\d+\.\d+\/([^/?]+)\/messages$/.exec(req.url);
    if (req.method !== 'POST' || !m) return graphError(400, 100, 'Unsupported post request');
    if (req.headers.authorization !== `Bearer ${opts.token}`) return graphError(401, 190, 'Invalid OAuth access token');
    if (!opts.phoneNumberIds.includes(m[1]!)) return graphError(400, 100, `Unsupported post request. Object with ID '${m[1]}' does not exist`);
    const body = (req.json ?? {}) as {
      messaging_product?: unknown;
      to?: unknown;
      recipient?: unknown;
      type?: unknown;
      text?: { body?: unknown };
      interactive?: unknown;
    };
    const to = typeof body.to === 'string' && /^\d{7,15}$/.test(body.to) ? body.to : null;
    const recipient = typeof body.recipient === 'string' && body.recipient !== '' ? body.recipient : null;
    const content = body.type === 'text' ? typeof body.text?.body === 'string' : body.type === 'interactive' && validButtons(body.interactive);
    if (body.messaging_product !== 'whatsapp' || (to === null) === (recipient === null) || !content) {
      return graphError(400, 100, 'Invalid parameter');
    }
    const id = wamid();
    return {
      status: 200,
      id,
      body: {
        messaging_product: 'whatsapp',
        contacts: [{ input: to ?? recipient, wa_id: to ?? undefined, user_id: recipient ?? undefined }],
        messages: [{ id }],
      },
    };
  });
}

/**
 * Meta's rules for an interactive reply-buttons message: `{type: "button", body: {text ≤ 1024},
 * action: {buttons: 1-3 × {type: "reply", reply: {id ≤ 256, title ≤ 20, unique}}}}`.
 */
function validButtons(interactive: unknown): boolean {
  const i = (interactive ?? {}) as { type?: unknown; body?: { text?: unknown }; action?: { buttons?: unknown } };
  if (i.type !== 'button' || typeof i.body?.text !== 'string' || i.body.text.length > 1024 || !Array.isArray(i.action?.buttons)) return false;
  const buttons = i.action.buttons as Array<{ type?: unknown; reply?: { id?: unknown; title?: unknown } }>;
  const ok = (b: (typeof buttons)[number]): boolean =>
    b.type === 'reply' && typeof b.reply?.id === 'string' && b.reply.id.length <= 256 && typeof b.reply.title === 'string' && [...b.reply.title].length <= 20;
  return buttons.length >= 1 && buttons.length <= 3 && buttons.every(ok) && new Set(buttons.map((b) => b.reply?.id)).size === buttons.length;
}

/** The reply buttons of a Cloud API interactive message (empty for any other request). */
export function buttonsOf(req: RecordedRequest): Array<{ id: string; title: string }> {
  const j = (req.json ?? {}) as { interactive?: { action?: { buttons?: Array<{ reply?: { id: string; title: string } }> } } };
  return (j.interactive?.action?.buttons ?? []).flatMap((b) => (b.reply ? [b.reply] : []));
}

/** The recipient digits and text of an outbound request of either gateway (Evolution v2 or Cloud API, text or interactive). */
export function outboundOf(req: RecordedRequest): { to: string | null; text: string | null } {
  const j = (req.json ?? {}) as { number?: unknown; text?: unknown; to?: unknown; interactive?: { body?: { text?: unknown } } };
  if (typeof j.number === 'string') return { to: j.number, text: typeof j.text === 'string' ? j.text : null };
  const body = typeof j.text === 'object' && j.text !== null ? (j.text as { body?: unknown }).body : j.interactive?.body?.text;
  return { to: typeof j.to === 'string' ? j.to : null, text: typeof body === 'string' ? body : null };
}

/** A Cloud API webhook of a reply-button press (`type: "interactive"`, `interactive.button_reply`), in answer to message `context`. */
export function cloudButtonReply(opts: { phone: string; id: string; title: string; context?: string; name?: string }): Record<string, unknown> {
  return cloudInbound(opts.phone.replace(/^\+/, ''), opts.name, {
    context: { from: '15550783881', id: opts.context ?? wamid() },
    id: wamid(),
    type: 'interactive',
    interactive: { type: 'button_reply', button_reply: { id: opts.id, title: opts.title } },
  });
}

/** A Cloud API status webhook of message `id` to `phone`, priced as Meta prices it (per-message pricing, `PMP`). */
export function cloudPricedStatus(opts: {
  id: string;
  phone: string;
  status?: 'sent' | 'delivered' | 'read';
  billable?: boolean;
  category?: string;
}): Record<string, unknown> {
  const to = opts.phone.replace(/^\+/, '');
  const billable = opts.billable ?? true;
  return cloudWebhook({
    statuses: [
      {
        id: opts.id,
        status: opts.status ?? 'sent',
        timestamp: String(Math.floor(Date.now() / 1000)),
        recipient_id: to,
        pricing: { billable, pricing_model: 'PMP', category: opts.category ?? 'utility', type: billable ? 'regular' : 'free_customer_service' },
      },
    ],
  });
}

/**
 * Both gateways configured against one mock: Evolution's instance `test-instance` and the Cloud
 * API number of `cloudMessage` (106540352242922), so each helper message is answered on its channel.
 */
export const bothGatewaysEnv = (url: string): Record<string, string> => ({
  MESSAGING_PROVIDER: 'evolution,cloud',
  EVOLUTION_API_URL: url,
  EVOLUTION_API_KEY: 'evo-key',
  EVOLUTION_INSTANCE: 'test-instance',
  WHATSAPP_TOKEN: 'graph-token',
  WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
  GRAPH_API_URL: `${url}/v21.0`,
});
