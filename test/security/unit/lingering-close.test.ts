import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import type { AppState } from '../../../src/http/context.js';
import { LINGER_AT_ONCE, lingeringClose, sendAnswer } from '../../../src/http/lingering-close.js';
import { errorHandler } from '../../../src/http/middleware/errors.js';
import { jsonBody } from '../../../src/http/middleware/json-body.js';

const MIB = 1024 * 1024;

/** One raw connection: `head` then `body` written at once; what came back, and how it ended. */
interface Raw {
  socket: net.Socket;
  /** resolves with the text received once an answer's head is in (the bodies here are tiny) */
  head: Promise<string>;
  ended: Promise<{ text: string; error?: string }>;
  isClosed: () => boolean;
}

function raw(port: number, head: string, body: Buffer = Buffer.alloc(0)): Raw {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.concat([Buffer.from(head), body])));
  let text = '';
  let error: string | undefined;
  let closed = false;
  let gotHead: (t: string) => void = () => undefined;
  const headIn = new Promise<string>((resolve) => (gotHead = resolve));
  socket.on('data', (b: Buffer) => {
    text += b.toString('latin1');
    if (text.includes('\r\n\r\n')) gotHead(text);
  });
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code));
  const ended = new Promise<{ text: string; error?: string }>((resolve) =>
    socket.on('close', () => {
      closed = true;
      resolve({ text, error });
    }),
  );
  return { socket, head: headIn, ended, isClosed: () => closed };
}

const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** The lingering close alone, on in-process servers: Koa's door (lingeringClose) and sendAnswer itself. */
describe('security: lingering close (unit)', function () {
  const servers: http.Server[] = [];
  const sockets: net.Socket[] = [];
  after(async function () {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });
  const serve = (listener: http.RequestListener): Promise<number> => {
    const server = http.createServer(listener);
    servers.push(server);
    return listen(server);
  };

  it('Koa: a 413 refused before a 2 MiB body is read reaches the client, which finishes its upload and sees a clean close', async function () {
    const app = new Koa<AppState>();
    app.use(lingeringClose());
    app.use(errorHandler());
    app.use(jsonBody('16kb'));
    app.use((ctx) => {
      ctx.body = { read: true };
    });
    const port = await serve(app.callback());
    const body = Buffer.alloc(2 * MIB, 0x20);
    const r = raw(port, `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`, body);
    const { text, error } = await r.ended;
    expect(text).to.match(/^HTTP\/1\.1 413 /);
    expect(text).to.match(/\r\nConnection: close\r\n/i);
    expect(text).to.match(/"error":"PAYLOAD_TOO_LARGE"/);
    expect(error).to.equal(undefined);
  });

  it('a request whose body has all arrived keeps its connection (no Connection: close)', async function () {
    const port = await serve((req, res) => req.resume().on('end', () => sendAnswer(req, res, 200, ['Content-Length', '2'], 'ok')));
    const r = raw(port, 'POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}');
    sockets.push(r.socket);
    const text = await r.head;
    expect(text).to.match(/^HTTP\/1\.1 200 /);
    expect(text).to.not.match(/\r\nConnection: close\r\n/i);
    expect(r.isClosed()).to.equal(false);
  });

  it(`past ${LINGER_AT_ONCE} lingering closes at once, a refusal closes at once`, async function () {
    const port = await serve((req, res) => sendAnswer(req, res, 401, ['Content-Length', '2'], 'no'));
    const stalled = `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${MIB}\r\n\r\n`;
    const lingering = Array.from({ length: LINGER_AT_ONCE }, () => raw(port, stalled));
    sockets.push(...lingering.map((r) => r.socket));
    // each answered, each still open: the node waits for the rest of its body
    for (const r of lingering) expect(await r.head).to.match(/^HTTP\/1\.1 401 /);
    const extra = raw(port, stalled);
    sockets.push(extra.socket);
    const { text } = await extra.ended;
    expect(text).to.match(/^HTTP\/1\.1 401 /);
    expect(lingering.filter((r) => r.isClosed())).to.have.length(0);
  });
});
