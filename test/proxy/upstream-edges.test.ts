/**
 * Upstream behaviour the simulator does not produce, from a scripted fake upstream: retry headers
 * on a 429, an HTML error page, an upstream that never answers (headers timeout), a client
 * that leaves before the upstream's first byte, and a stream relayed as it comes (the frames of
 * one upstream read go out together, never held to the end).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { newSessions, sessionIds, startWorld, tag, until, type World } from '../e2e/harness.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
let closed: { at: number }[] = [];
let fake: Server;
let w: World;

beforeAll(async () => {
  fake = createServer((req, res) => {
    req.resume();
    res.on('close', () => {
      if (!res.writableFinished) closed.push({ at: Date.now() });
    });
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/v1`;
  w = await startWorld({
    extraToml: `
[providers.fake]
preset = "generic"
base_url = "${url}"
timeouts = { headers_ms = 300 }

[models.fake]
provider = "fake"
model = "fake-model"
`,
  });
});
afterAll(async () => {
  await w?.close();
  fake.closeAllConnections();
  await new Promise<void>((resolve) => fake.close(() => resolve()));
});

async function post(body: Record<string, unknown>, signal?: AbortSignal): Promise<{ status: number; headers: Headers; json: { error: Record<string, unknown> } }> {
  const res = await fetch(`${w.proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fake', ...body }), ...(signal === undefined ? {} : { signal }),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as { error: Record<string, unknown> } };
}

describe('upstream edges', () => {
  it('relays a stream as it comes: the client reads the first words before the upstream sends the rest', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    let release!: () => void;
    const clientSawFirst = new Promise<void>((resolve) => { release = resolve; });
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Two frames in one read, then nothing until the client has shown it read them.
      res.write(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'first words' }));
      void clientSawFirst.then(() => res.end(chunk({ content: ', then the rest' }) + chunk({}, 'stop') + 'data: [DONE]\n\n'));
    };
    const res = await fetch(`${w.proxy.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fake', stream: true, messages: [{ role: 'user', content: tag('as-it-comes') }] }),
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('first words')) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += new TextDecoder().decode(value);
    }
    expect(text).not.toContain('then the rest');
    release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
    expect(text).toContain('then the rest');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('a 429 keeps its retry headers', async () => {
    handler = (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7', 'retry-after-ms': '7000', 'x-should-retry': 'true' });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } }));
    };
    const r = await post({ messages: [{ role: 'user', content: tag('429') }] });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.headers.get('retry-after-ms')).toBe('7000');
    expect(r.headers.get('x-should-retry')).toBe('true');
    expect(r.json.error).toEqual({ message: 'slow down', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' });
  });

  it('a stream that ends without a finish reason is an error to the client, never a finish', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"half a"},"finish_reason":null}]}\n\n');
      res.end('data: [DONE]\n\n');
    };
    const plain = await post({ messages: [{ role: 'user', content: tag('cut-plain') }] });
    expect(plain.status).toBe(502);
    expect(plain.json.error).toMatchObject({ code: 'upstream_error' });
    expect(String(plain.json.error.message)).toContain('without a finish reason');
    const res = await fetch(`${w.proxy.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fake', stream: true, messages: [{ role: 'user', content: tag('cut-stream') }] }),
    });
    const text = await res.text();
    expect(text).toContain('half a');
    expect(text).toContain('without a finish reason');
    expect(text).not.toContain('"finish_reason":"stop"');
  });

  it('an HTML error page becomes an OpenAI-shaped error with the same status', async () => {
    handler = (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>');
    };
    for (const stream of [false, true]) {
      const r = await post({ stream, messages: [{ role: 'user', content: tag('html') }] });
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
      expect(r.json.error).toMatchObject({ type: 'api_error', code: 'upstream_error', param: null });
      expect(r.json.error.message).toContain('503 Service Temporarily Unavailable');
    }
  });

  it('an upstream that sends no headers in time: 504 upstream_headers_timeout, logged', async () => {
    handler = () => undefined;
    const before = await sessionIds(w);
    const r = await post({ messages: [{ role: 'user', content: tag('timeout') }] });
    expect(r.status).toBe(504);
    expect(r.json.error).toMatchObject({ code: 'upstream_headers_timeout', type: 'api_error' });
    expect(r.json.error.message).toContain('300 ms');
    const events = [...(await newSessions(w, before)).values()][0]!;
    expect(events.find((e) => e.type === 'llm.error')).toMatchObject({ error: expect.stringContaining('300 ms') });
  });

  it('a client that leaves before the first upstream byte: the upstream call is dropped and logged as aborted', async () => {
    let answer: (() => void) | undefined;
    handler = (_req, res) => {
      answer = () => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: [DONE]\n\n');
    };
    closed = [];
    const before = await sessionIds(w);
    const controller = new AbortController();
    const sent = post({ messages: [{ role: 'user', content: tag('leave') }] }, controller.signal).catch((e: unknown) => e);
    await until(() => answer !== undefined);
    const leftAt = Date.now();
    controller.abort();
    expect(await sent).toBeInstanceOf(Error);
    await until(() => closed.length > 0);
    // This upstream never answers by itself: a close within a second is the proxy dropping it (the
    // bound leaves room for a loaded machine; a proxy that kept the call open would never close it).
    expect(closed[0]!.at - leftAt).toBeLessThan(1000);
    const resp = await until(async () => {
      const events = [...(await newSessions(w, before)).values()][0] ?? [];
      return events.find((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
    });
    expect(resp).toMatchObject({ aborted: true, reply: { content: null } });
    // The proxy goes on serving.
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"fine"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
    };
    const ok = await w.client.chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: tag('after') }] });
    expect(ok.choices[0]!.message.content).toBe('fine');
  });
});
