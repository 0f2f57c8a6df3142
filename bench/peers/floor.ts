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
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { FloorFiles, type ChatBody } from './floor-files.js';
import { serve } from './serve.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' }, dir: { type: 'string' } } });
if (values.upstream === undefined || values.dir === undefined) throw new Error('floor: --upstream and --dir are required');

const pool = new Pool(values.upstream, { connections: 64 });
const files = new FloorFiles(values.dir);

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
  const file = files.take(body);
  try {
    files.append(file, { type: 'request', message: body.messages.at(-1) });
    const up = await pool.request({ method: 'POST', path: req.url ?? '/', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (body.stream === true) {
      res.writeHead(up.statusCode, { 'content-type': 'text/event-stream' });
      let text = '';
      for await (const chunk of up.body) {
        text += (chunk as Buffer).toString('utf8');
        res.write(chunk);
      }
      files.append(file, { type: 'reply', stream: text });
      await files.sync(file);
      res.end();
      return;
    }
    const text = await up.body.text();
    const reply = JSON.parse(text) as { choices: { message: unknown }[]; usage?: unknown };
    files.append(file, { type: 'reply', message: reply.choices[0]?.message, usage: reply.usage });
    await files.sync(file);
    res.writeHead(up.statusCode, { 'content-type': 'application/json' });
    res.end(text);
  } finally {
    files.done(file);
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: Error) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: err.message, type: 'floor_error' } }));
  });
});

serve(server, values.port);
