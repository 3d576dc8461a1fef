import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors.js';

/**
 * Requests Node's HTTP parser refuses before Koa sees them (malformed request line, headers or
 * URL over the size limit, bad chunk encoding) still get documented error body instead of
 * Node's bare `400`/`431` with no body: 400 VALIDATION_ERROR, and the connection is closed.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // the peer is gone or too slow (slowloris): nothing useful can be written
    if (err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
      socket.destroy();
      return;
    }
    const message = err.code === 'HPE_HEADER_OVERFLOW' ? 'Request headers are too large' : 'Malformed HTTP request';
    const body = JSON.stringify(new AppError('VALIDATION_ERROR', message).toBody());
    socket.end(
      'HTTP/1.1 400 Bad Request\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
