/**
 * Headers past Node's limit (16 KB) never reach fastify: the HTTP parser fails first and the
 * server would answer a bare 431. Here that answer is an error in the caller's own wire, chosen
 * from the request line, which is complete by the time the headers overflow.
 */
import type { Socket } from 'node:net';
import { ProxyError, errorBody } from '../core/errors.js';
import type { InboundDialect } from '../dialects/types.js';

/** fastify's `clientErrorHandler`: 431 in the wire of the endpoint asked for; anything else as Node answers it. */
export function clientErrorHandler(wireOf: (path: string) => InboundDialect | undefined) {
  return (err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (!socket.writable) return;
    if (err.code !== 'HPE_HEADER_OVERFLOW') {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    // Node hands the bytes read so far as a Buffer (fastify's type says otherwise).
    const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : Buffer.alloc(0);
    const line = raw.subarray(0, 2048).toString('latin1').split('\r\n', 1)[0] ?? '';
    const path = (line.split(' ')[1] ?? '').split('?')[0]!;
    const proxyErr = new ProxyError('headers_too_large', { limit: 16 * 1024 });
    const inbound = wireOf(path);
    const body = JSON.stringify(inbound === undefined ? errorBody(proxyErr) : inbound.errorBody(proxyErr));
    socket.end(
      `HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
