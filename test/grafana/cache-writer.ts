/**
 * A fake upstream that reports cache writes, which the simulator never does: an OpenAI-style
 * stream whose usage carries `prompt_tokens_details.cache_write_tokens` (OpenRouter's field) and
 * a provider cost. The first request of a conversation writes, later ones read what it wrote.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CacheWriter {
  /** Base URL with `/v1`. */
  url: string;
  requests: number;
  close(): Promise<void>;
}

const PROMPT = 3000;
const WRITTEN = 2900;

export async function startCacheWriter(): Promise<CacheWriter> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const first = state.requests === 0;
      state.requests++;
      const usage = {
        prompt_tokens: PROMPT,
        completion_tokens: 3,
        total_tokens: PROMPT + 3,
        prompt_tokens_details: first ? { cached_tokens: 0, cache_write_tokens: WRITTEN } : { cached_tokens: WRITTEN, cache_write_tokens: 0 },
        cost: first ? 0.0109 : 0.0011,
      };
      const base = { id: `chatcmpl-w${state.requests}`, object: 'chat.completion.chunk', created: 0, model: 'writer-1' };
      const frames = [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: { content: 'written.' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { ...base, choices: [], usage },
      ];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const f of frames) res.write(`data: ${JSON.stringify(f)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}
