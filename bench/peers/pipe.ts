/**
 * The floor every gateway is held to (docs/architecture.md section 12): node:http in, one undici
 * Pool out, request and response bodies streamed through, nothing parsed. Run as its own process.
 * Usage: node pipe.js --port N --upstream http://127.0.0.1:M
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { serve } from './serve.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } } });
if (values.upstream === undefined) throw new Error('pipe: --upstream is required');

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'proxy-connection', 'upgrade', 'te', 'trailer']);
const pool = new Pool(values.upstream, { connections: 64 });

function forward(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP.has(name)) out[name] = value;
  return out;
}

const server = createServer((req, res) => {
  pool.request({ method: req.method as 'POST', path: req.url ?? '/', headers: forward(req.headers), body: req }).then(
    (up) => {
      res.writeHead(up.statusCode, forward(up.headers as IncomingHttpHeaders));
      pipeline(up.body, res, () => {});
    },
    (err: Error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: err.message, type: 'upstream_error' } }));
    },
  );
});

serve(server, values.port);
