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
  const phone = (opts.phone ?? '+5511' + String(Math.floor(1e8 + Math.random() * 9e8))).replace(/^\+/, '');
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

export function cloudMessage(opts: { text: string; phone?: string; id?: string; name?: string }): Record<string, unknown> {
  const from = (opts.phone ?? '+1555' + String(Math.floor(1e6 + Math.random() * 9e6))).replace(/^\+/, '');
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
              contacts: [{ profile: { name: opts.name ?? 'Cloud Person' }, wa_id: from }],
              messages: [
                {
                  from,
                  id: opts.id ?? 'wamid.' + randomBytes(16).toString('base64url'),
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  type: 'text',
                  text: { body: opts.text },
                },
              ],
            },
          },
        ],
      },
    ],
  };
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
    fallback: { status: 201, body: { key: { id: 'MOCK' + randomBytes(6).toString('hex') }, status: 'PENDING' } },
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
