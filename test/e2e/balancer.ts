/**
 * A small retrying balancer for the replica tests (drains, chaos): round robin over the replicas
 * it is given, a fresh connection per request, and the request tried on the next replica when one
 * refuses or drops the connection before answering, or answers 503 (draining, store unavailable),
 * as nginx's `proxy_next_upstream error timeout http_503` does. Once a response has begun it is
 * passed through as it comes; a replica that dies mid-answer cuts the client's connection.
 */
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  url: string;
  /** Requests that went to another replica after a failure, by cause. */
  retried: { error: number; status503: number };
  close(): Promise<void>;
}

/** `origins()` is asked at each request: the test changes it as replicas come and go. */
export async function startBalancer(origins: () => readonly string[], opts: { tries?: number; waitMs?: number } = {}): Promise<Balancer> {
  const tries = opts.tries ?? 40;
  const waitMs = opts.waitMs ?? 100;
  const agent = new Agent({ keepAlive: false });
  const retried = { error: 0, status503: 0 };
  let next = 0;

  const forward = (origin: string, req: IncomingMessage, body: Buffer): Promise<IncomingMessage> => new Promise((resolve, reject) => {
    const out = request(new URL(req.url ?? '/', origin), { method: req.method, headers: { ...req.headers, host: new URL(origin).host, connection: 'close' }, agent }, resolve);
    out.on('error', reject);
    out.end(body);
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    let last = '';
    for (let attempt = 0; attempt < tries; attempt++) {
      const list = origins();
      if (list.length === 0) {
        await new Promise((r) => setTimeout(r, waitMs));
        continue;
      }
      const origin = list[next++ % list.length]!;
      let up: IncomingMessage;
      try {
        up = await forward(origin, req, body);
      } catch (err) {
        retried.error++;
        last = (err as Error).message;
        await new Promise((r) => setTimeout(r, attempt < list.length ? 0 : waitMs));
        continue;
      }
      if (up.statusCode === 503) {
        up.resume();
        retried.status503++;
        last = '503';
        await new Promise((r) => setTimeout(r, attempt < list.length ? 0 : waitMs));
        continue;
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.on('error', () => res.destroy());
      up.on('aborted', () => res.destroy());
      up.pipe(res);
      return;
    }
    res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `balancer: no replica answered (${last})`, type: 'api_error', code: 'balancer' } }));
  };

  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    retried,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
      agent.destroy();
    }),
  };
}
