/**
 * The durable floor on prefix-proxy's own stack: floor.ts's work (parse, log what is new, an
 * fdatasync before the answer ends, nothing else) served the way prefix-proxy serves it. Fastify
 * takes the request and reads its body (parsed as the floor parses it); one undici Pool sends it upstream, always asking to stream
 * as prefix-proxy does (src/proxy/pipeline/index.ts: the first byte and a client that leaves are
 * both seen); a client that did not ask to stream gets the events read and one JSON body made of
 * them. Beside floor.ts it shows what the stack alone adds, so what prefix-proxy spends above it
 * is its own work (docs/decisions/0019-the-floor-on-the-proxys-stack.md).
 * Run as its own process. Usage: node stack-floor.js --port N --upstream http://127.0.0.1:M --dir DIR
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { FloorFiles, type ChatBody } from './floor-files.js';

interface Chunk {
  choices?: { delta?: { content?: string } }[];
  usage?: unknown;
}

/** The content and usage of an SSE body's `data:` events, read as they come. */
class EventReader {
  content = '';
  usage: unknown;
  #rest = '';

  push(text: string): void {
    this.#rest += text;
    for (let end = this.#rest.indexOf('\n\n'); end !== -1; end = this.#rest.indexOf('\n\n')) {
      const event = this.#rest.slice(0, end);
      this.#rest = this.#rest.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const chunk = JSON.parse(event.slice(6)) as Chunk;
      if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
      this.content += chunk.choices?.[0]?.delta?.content ?? '';
    }
  }
}

/** The floor's app, not yet listening: it sends to `upstream` and keeps its files in `dir`. */
export function stackFloor(upstream: string, dir: string): FastifyInstance {
  const pool = new Pool(upstream, { connections: 64 });
  const files = new FloorFiles(dir);
  const app = Fastify({ logger: false, bodyLimit: 64 * 2 ** 20, keepAliveTimeout: 60_000 });
  app.addHook('onClose', () => pool.close());
  // The body read by fastify as prefix-proxy has it read (src/proxy/app.ts: a buffer, then its own
  // parse), parsed as the floor parses it: fastify's default parser scans for prototype keys as
  // well, which prefix-proxy does not run.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, JSON.parse((body as Buffer).toString('utf8')));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.post('/v1/chat/completions', async (req, reply) => {
    const body = req.body as ChatBody;
    const file = files.take(body);
    try {
      files.append(file, { type: 'request', message: body.messages.at(-1) });
      const up = await pool.request({
        method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }),
      });
      // An upstream error goes back as it came: a run that fails must not look answered.
      if (up.statusCode !== 200) return await reply.code(up.statusCode).type('application/json').send(await up.body.text());
      if (body.stream === true) {
        void reply.hijack();
        reply.raw.writeHead(up.statusCode, { 'content-type': 'text/event-stream' });
        let text = '';
        for await (const chunk of up.body) {
          text += (chunk as Buffer).toString('utf8');
          reply.raw.write(chunk);
        }
        files.append(file, { type: 'reply', stream: text });
        await files.sync(file);
        reply.raw.end();
        return reply;
      }
      const events = new EventReader();
      for await (const chunk of up.body) events.push((chunk as Buffer).toString('utf8'));
      const message = { role: 'assistant', content: events.content };
      files.append(file, { type: 'reply', message, usage: events.usage });
      await files.sync(file);
      return { id: 'chatcmpl-floor', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: body.model, choices: [{ index: 0, message, finish_reason: 'stop' }], usage: events.usage };
    } finally {
      files.done(file);
    }
  });
  return app;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' }, dir: { type: 'string' } } });
  if (values.upstream === undefined || values.dir === undefined) throw new Error('stack floor: --upstream and --dir are required');
  stackFloor(values.upstream, values.dir).listen({ port: Number(values.port), host: '127.0.0.1' }).then(
    (address) => process.stdout.write(`listening ${new URL(address).port}\n`),
    (err: Error) => {
      process.stderr.write(`stack floor: ${err.message}\n`);
      process.exit(1);
    },
  );
  process.once('SIGTERM', () => process.exit(0));
}
