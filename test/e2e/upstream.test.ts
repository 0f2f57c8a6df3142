/**
 * Upstream failures as the client sees them (passed through, overflow, unreachable, a stream that
 * breaks), and the proxy's other routes: /v1/models, /healthz, /metrics.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { EventOf } from '../../src/core/events.js';
import { newSessions, replayAll, sessionIds, startWorld, tag, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  await w?.close();
});

async function rawPost(body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${w.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('upstream errors', () => {
  for (const stream of [false, true]) {
    it(`a 429 is passed through with its status and body (${stream ? 'stream' : 'non-stream'})`, async () => {
      const before = await sessionIds(w);
      const t = tag('429');
      const r = await rawPost({ model: 'oa', stream, messages: [{ role: 'user', content: `${t} [[error 429]]` }] });
      expect(r.status).toBe(429);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
      expect(JSON.parse(r.text)).toEqual({
        error: { message: 'Simulated error 429 (asked for by [[error 429]]).', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
      });
      // The log says what happened.
      const events = [...(await newSessions(w, before)).values()][0]!;
      const error = events.find((e): e is EventOf<'llm.error'> => e.type === 'llm.error')!;
      expect(error.status).toBe(429);
      expect(events.some((e) => e.type === 'llm.resp')).toBe(false);
    });
  }

  it('the SDK sees a 429 as its RateLimitError, and a 503 as InternalServerError', async () => {
    const t = tag('sdk-errors');
    const rate = await w.client.chat.completions.create({ model: 'oa', messages: [{ role: 'user', content: `${t} [[error 429]]` }] }).catch((e: unknown) => e);
    expect(rate).toBeInstanceOf(OpenAI.RateLimitError);
    expect(rate).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    const down = await w.client.chat.completions.create({ model: 'oa', stream: true, messages: [{ role: 'user', content: `${t} [[error 503]]` }] }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(OpenAI.InternalServerError);
    expect(down).toMatchObject({ status: 503 });
  });

  for (const stream of [false, true]) {
    it(`[[overflow]] is a 400 context_length_exceeded (${stream ? 'stream' : 'non-stream'})`, async () => {
      const r = await rawPost({ model: 'ds', stream, messages: [{ role: 'user', content: `${tag('overflow')} [[overflow]]` }] });
      expect(r.status).toBe(400);
      const body = JSON.parse(r.text) as { error: { message: string; type: string; param: string | null; code: string } };
      expect(body.error.code).toBe('context_length_exceeded');
      expect(body.error.type).toBe('invalid_request_error');
      expect(body.error.param).toBe('messages');
      expect(body.error.message).toMatch(/maximum context length is \d+ tokens/);
    });
  }

  it('an unreachable upstream is a 502 upstream_unreachable', async () => {
    for (const stream of [false, true]) {
      const r = await rawPost({ model: 'dead', stream, messages: [{ role: 'user', content: `${tag('dead')} hello` }] });
      expect(r.status).toBe(502);
      const body = JSON.parse(r.text) as { error: { message: string; type: string; code: string } };
      expect(body.error.code).toBe('upstream_unreachable');
      expect(body.error.type).toBe('api_error');
      expect(body.error.message).toContain('dead');
    }
  });

  it('a stream that breaks after it started ends with an error frame the SDK raises', async () => {
    const stream = await w.client.chat.completions.create({ model: 'oa', stream: true, messages: [{ role: 'user', content: `${tag('broken')} [[say some text before it breaks]] [[stream-error]]` }] });
    let text = '';
    const failure = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toMatch(/upstream/i);
    expect(text.length).toBeGreaterThan(0);
  });
});

describe('other routes', () => {
  it('GET /v1/models lists the configured models (and the SDK reads it)', async () => {
    const ids: string[] = [];
    for await (const m of w.client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['ds', 'cb', 'oa', 'dead']);
  });

  it('GET /healthz', async () => {
    const res = await fetch(`${w.proxy.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', damaged_sessions: 0 });
  });

  it('GET /metrics has proxy_requests_total by status, the errors included', async () => {
    await w.client.chat.completions.create({ model: 'oa', messages: [{ role: 'user', content: `${tag('metrics')} [[say ok]]` }] });
    const res = await fetch(`${w.proxy.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    const count = (status: string, model: string) => {
      const line = text.split('\n').find((l) => l.startsWith('proxy_requests_total{') && l.includes(`status="${status}"`) && l.includes(`model="${model}"`));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    expect(count('200', 'oa')).toBeGreaterThanOrEqual(1);
    expect(count('429', 'oa')).toBe(3);
    expect(count('400', 'ds')).toBe(2);
    expect(count('502', 'dead')).toBe(2);
    expect(text).toMatch(/proxy_upstream_errors_total\{[^}]*status="429"[^}]*\} 3/);
  });

  it('an unknown route is a 404 in the OpenAI shape', async () => {
    const res = await fetch(`${w.proxy.url}/v1/embeddings`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request' } });
  });

  it('a WebSocket asked of a conversation endpoint is a 426, so the client goes on over HTTP; a plain GET of it is still a 404', async () => {
    const get = (headers: Record<string, string>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${w.proxy.url}/v1/responses`, { method: 'GET', headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    const ws = await get({ connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' });
    expect(ws.status).toBe(426);
    expect(JSON.parse(ws.body)).toMatchObject({ error: { type: 'invalid_request_error', message: 'The proxy serves /v1/responses over HTTP only: POST the request.' } });
    expect((await get({})).status).toBe(404);
  });
});

it('every logged request replays (failed ones included)', async () => {
  const r = await replayAll(w);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
