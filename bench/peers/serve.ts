/**
 * How the bench's own servers (the fake upstream, the bare pipe, the durable floor) run as child
 * processes: on loopback, keep-alive as clients expect, the port said on stdout for
 * targets.ts to read, and a clean exit on SIGTERM.
 */
import type { Server } from 'node:http';

export function serve(server: Server, port: string): void {
  server.keepAliveTimeout = 60_000;
  server.listen(Number(port), '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address !== null ? address.port : port}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}
