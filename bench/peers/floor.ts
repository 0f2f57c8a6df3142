/**
 * The durable floor: the least any gateway does per request under prefix-proxy's durability
 * policy (docs/decisions.md, Durability), and nothing more. It reads and parses the client's body,
 * appends the request's last message to the conversation's own file, sends the body serialised
 * again, parses the reply (or, streamed, passes it on and keeps its text), appends that, and
 * waits for an fdatasync before the answer's last byte. No validation, session matching,
 * redaction, window, digest, metrics or error answers. Beside the bare pipe it shows how much of a
 * gateway's cost the policy itself sets (docs/decisions.md, A durable floor beside the pipe).
 * Run as its own process. Usage: node floor.js --port N --upstream http://127.0.0.1:M --dir DIR
 */
import { closeSync, fdatasync, openSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Pool } from 'undici';
import { serve } from './serve.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' }, dir: { type: 'string' } } });
if (values.upstream === undefined || values.dir === undefined) throw new Error('floor: --upstream and --dir are required');
const dir = values.dir;

const datasync = promisify(fdatasync);
const pool = new Pool(values.upstream, { connections: 64 });

interface LogFile {
  fd: number;
  /** Requests between their first write and their sync: the file is not closed under them. */
  busy: number;
}

/**
 * One file per conversation, found by its first user message (the bench's conversations each
 * begin with their own), created on its first request. At most OPEN stay open: (b) makes a new
 * one on every request.
 */
const files = new Map<string, LogFile>();
const OPEN = 1000;
let created = 0;

interface ChatBody {
  messages: { role: string; content?: unknown }[];
  stream?: boolean;
}

/** The conversation's file, counted busy until the caller's `busy--`. */
function takeFile(body: ChatBody): LogFile {
  const first = body.messages.find((m) => m.role === 'user')?.content;
  const key = (typeof first === 'string' ? first : JSON.stringify(first ?? null)).slice(0, 200);
  let file = files.get(key);
  if (file === undefined) {
    file = { fd: openSync(join(dir, `${created++}.log`), 'wx'), busy: 0 };
    files.set(key, file);
  }
  file.busy++;
  if (files.size > OPEN) closeOldestIdle();
  return file;
}

function closeOldestIdle(): void {
  for (const [key, file] of files) {
    if (file.busy > 0) continue;
    files.delete(key);
    closeSync(file.fd);
    return;
  }
}

function append(file: LogFile, event: object): void {
  writeSync(file.fd, `${JSON.stringify({ ts: new Date().toISOString(), ...event })}\n`);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
  const file = takeFile(body);
  try {
    append(file, { type: 'request', message: body.messages.at(-1) });
    const up = await pool.request({ method: 'POST', path: req.url ?? '/', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (body.stream === true) {
      res.writeHead(up.statusCode, { 'content-type': 'text/event-stream' });
      let text = '';
      for await (const chunk of up.body) {
        text += (chunk as Buffer).toString('utf8');
        res.write(chunk);
      }
      append(file, { type: 'reply', stream: text });
      await datasync(file.fd);
      res.end();
      return;
    }
    const text = await up.body.text();
    const reply = JSON.parse(text) as { choices: { message: unknown }[]; usage?: unknown };
    append(file, { type: 'reply', message: reply.choices[0]?.message, usage: reply.usage });
    await datasync(file.fd);
    res.writeHead(up.statusCode, { 'content-type': 'application/json' });
    res.end(text);
  } finally {
    file.busy--;
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: Error) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: err.message, type: 'floor_error' } }));
  });
});

serve(server, values.port);
