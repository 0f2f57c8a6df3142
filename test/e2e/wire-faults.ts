/**
 * Faults on the wire for e2e tests: an upstream stream cut half-way, an answer the client never
 * gets, and readers of an OpenAI-shaped error (a JSON body, or an SSE error frame).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OpenAIError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export interface Posted {
  status: number;
  contentType: string;
  text: string;
}

/** POST a chat request and read the whole answer as text. */
export async function post(base: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Posted> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }),
  });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The `data:` payloads of an SSE text, parsed (`[DONE]` left out). */
export function sseData(text: string): unknown[] {
  return text.split(/\n\n/).flatMap((frame) => {
    const data = frame.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return data === '' || data === '[DONE]' ? [] : [JSON.parse(data) as unknown];
  });
}

/** The error an answer carries: a JSON error body, or an error frame in an event stream. */
export function errorOf(r: Posted): OpenAIError | undefined {
  if (r.contentType.startsWith('text/event-stream')) {
    const frame = sseData(r.text).find((d): d is { error: OpenAIError } => typeof d === 'object' && d !== null && 'error' in d);
    return frame?.error;
  }
  if (r.status < 400) return undefined;
  return (JSON.parse(r.text) as { error: OpenAIError }).error;
}

/** The reply text of a successful answer, streamed or not. */
export function contentOf(r: Posted): string {
  if (r.contentType.startsWith('text/event-stream')) {
    return sseData(r.text).map((d) => (d as { choices?: { delta?: { content?: string | null } }[] }).choices?.[0]?.delta?.content ?? '').join('');
  }
  return (JSON.parse(r.text) as { choices: { message: { content: string | null } }[] }).choices[0]!.message.content ?? '';
}

export interface PassThrough {
  origin: string;
  /** Requests seen, with their headers. */
  seen: IncomingMessage['headers'][];
  close(): Promise<void>;
}

export interface BreakingUpstream extends PassThrough {
  /** Where requests go (`http://host:port`); set after the upstream started. */
  target: string;
  /** The next response: its status line, headers and first `bytes` body bytes, then the socket is destroyed. */
  breakNext(bytes: number): void;
}

/** In front of the simulator: forwards everything, except a response it was told to break. */
export async function startBreakingUpstream(): Promise<BreakingUpstream> {
  let cut: number | undefined;
  const seen: IncomingMessage['headers'][] = [];
  const self: BreakingUpstream = {
    origin: '', target: '', seen,
    breakNext: (bytes) => {
      cut = bytes;
    },
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const limit = cut;
    cut = undefined;
    forward(self.target, req, res, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      if (limit === undefined) {
        upRes.pipe(res);
        return;
      }
      let sent = 0;
      upRes.on('data', (chunk: Buffer) => {
        if (sent >= limit) return;
        const part = chunk.subarray(0, limit - sent);
        sent += part.length;
        // The cut comes once the bytes before it are out: the other side reads them, then the drop.
        res.write(part, () => {
          if (sent < limit) return;
          upRes.destroy();
          res.socket?.destroy();
        });
      });
      upRes.on('end', () => res.end());
    });
  });
  Object.assign(self, await listen(server));
  return self;
}

export interface DroppingFront extends PassThrough {
  /**
   * The next request goes through and its whole answer is read from the proxy (so the proxy
   * finished it and logged its reply), but the client gets nothing: its connection is dropped.
   */
  dropNextAnswer(): void;
  /** Resolves when the dropped answer has been read whole from the proxy. */
  dropped: Promise<string> | undefined;
}

/** In front of the proxy, for clients: forwards everything, except an answer it was told to drop. */
export async function startDroppingFront(target: string): Promise<DroppingFront> {
  let drop = false;
  const seen: IncomingMessage['headers'][] = [];
  const self: DroppingFront = {
    origin: '', seen, dropped: undefined,
    dropNextAnswer: () => {
      drop = true;
    },
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const dropThis = drop;
    drop = false;
    let done!: (text: string) => void;
    if (dropThis) self.dropped = new Promise((resolve) => (done = resolve));
    forward(target, req, res, (upRes) => {
      if (!dropThis) {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        res.socket?.destroy();
        done(Buffer.concat(chunks).toString('utf8'));
      });
    });
  });
  Object.assign(self, await listen(server));
  return self;
}

function forward(target: string, req: IncomingMessage, res: ServerResponse, onResponse: (upRes: IncomingMessage) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const up = httpRequest(`${target}${req.url ?? ''}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, onResponse);
    up.on('error', () => res.destroy());
    // A client that leaves takes the upstream call with it (only while the answer is still owed).
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(Buffer.concat(chunks));
  });
}

async function listen(server: Server): Promise<{ origin: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
