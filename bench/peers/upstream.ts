/**
 * A minimal OpenAI-compatible upstream for the peers bench, run as its own process: it answers
 * every chat completion at once with one fixed reply and usage, as SSE when the body asks to stream.
 * It reads the body but does not parse it (a byte search finds `"stream":true`), so its own cost
 * stays the floor every other target is measured over.
 * Usage: node upstream.js --port N
 */
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { serve } from './serve.js';

export const REPLY_TEXT = 'Read it. The change is in place and the tests pass.';
const COMPLETION_TOKENS = 12;
const STREAM_FLAG = Buffer.from('"stream":true');
const PIECES = ['Read it. ', 'The change is in place ', 'and the tests pass.'];

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found","type":"invalid_request_error"}}');
      return;
    }
    const body = Buffer.concat(chunks);
    const usage = { prompt_tokens: Math.ceil(body.length / 4), completion_tokens: COMPLETION_TOKENS, total_tokens: Math.ceil(body.length / 4) + COMPLETION_TOKENS };
    if (body.includes(STREAM_FLAG)) streamed(res, usage);
    else plain(res, usage);
  });
});

function plain(res: ServerResponse, usage: object): void {
  const out = JSON.stringify({
    id: 'chatcmpl-peers', object: 'chat.completion', created: 1_700_000_000, model: 'peers-1',
    choices: [{ index: 0, message: { role: 'assistant', content: REPLY_TEXT }, finish_reason: 'stop' }],
    usage,
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) }).end(out);
}

function streamed(res: ServerResponse, usage: object): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (choices: object[], extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-peers', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'peers-1', choices, ...extra })}\n\n`;
  // One write per event, as a model server sends them, so a streaming target sees several chunks.
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  for (const piece of PIECES) res.write(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  res.write(chunk([], { usage }));
  res.end('data: [DONE]\n\n');
}

serve(server, values.port);
