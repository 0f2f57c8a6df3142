/**
 * A drain (src/proxy/drain.ts): a stream in flight when the drain begins finishes whole; /readyz
 * says 503 from the first moment; a request that still reaches it (a kept-alive connection) is
 * refused in its own wire (shutting_down, connection: close); a new connection is refused; a stream
 * longer than the grace period is cut when it ends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../e2e/harness.js';

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('drain', () => {
  it('lets a stream in flight finish, answers /readyz 503 and new requests shutting_down in their wire, then refuses connections', async () => {
    w = await startWorld();
    const app = w.proxy.app;
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    const stream = await w.client.chat.completions.create({ model: 'oa', stream: true, messages: [{ role: 'user', content: 'Go. [[slow 40]] [[len 30]]' }] });
    const chunks: string[] = [];
    let finish: string | null | undefined;
    const reading = (async () => {
      for await (const c of stream) {
        chunks.push(c.choices[0]?.delta?.content ?? '');
        finish = c.choices[0]?.finish_reason ?? finish;
      }
    })();
    // The stream has begun: its first chunk is out.
    while (chunks.length === 0) await new Promise((r) => setTimeout(r, 10));
    const draining = w.proxy.drain(10_000);

    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'unavailable', reason: 'draining' });
    const chat = await app.inject({ method: 'POST', url: '/v1/chat/completions', payload: { model: 'oa', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.statusCode).toBe(503);
    expect(chat.headers.connection).toBe('close');
    expect(chat.json()).toMatchObject({ error: { code: 'shutting_down', type: 'api_error' } });
    const anthropic = await app.inject({ method: 'POST', url: '/v1/messages', payload: { model: 'oa', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });
    expect(anthropic.statusCode).toBe(503);
    expect(anthropic.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });

    await reading;
    expect(finish).toBe('stop');
    expect(chunks.join('').length).toBeGreaterThan(30);
    expect(await draining).toEqual({ waited: 1, cut: 0 });
    await expect(fetch(`${w.proxy.url}/healthz`)).rejects.toThrow();
  });

  it('cuts a stream still running when the grace period ends', async () => {
    w = await startWorld();
    const stream = await w.client.chat.completions.create({ model: 'oa', stream: true, messages: [{ role: 'user', content: 'Go. [[slow 200]] [[len 100]]' }] });
    let chunks = 0;
    const reading = (async () => {
      for await (const _ of stream) chunks++;
    })();
    while (chunks === 0) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    expect(await w.proxy.drain(300)).toEqual({ waited: 1, cut: 1 });
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(reading).rejects.toThrow();
  });
});
