/** The simulator's transport faults (directives.ts), on the chat wire, read from raw HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDirectives } from '../../src/sim/directives.js';
import { createSim, type Sim } from '../../src/sim/server.js';

let sim: Sim;
beforeAll(async () => {
  sim = await createSim();
});
afterAll(async () => {
  await sim.close();
});

const body = (text: string, stream = true) => JSON.stringify({ model: 'm', stream, messages: [{ role: 'user', content: text }] });

async function call(text: string, stream = true): Promise<{ status: number; headers: Headers; text: string; broke: boolean }> {
  const res = await fetch(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(text, stream) });
  let got = '';
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      got += Buffer.from(value).toString('utf8');
    }
  } catch {
    return { status: res.status, headers: res.headers, text: got, broke: true };
  }
  return { status: res.status, headers: res.headers, text: got, broke: false };
}

const payloads = (text: string) => text.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));

describe('transport fault directives', () => {
  it('parses each, with its number where it takes one', () => {
    expect(parseDirectives('[[reset]] [[reset-mid]] [[malformed-sse]] [[no-finish]] [[oversized]] [[retry-after 3]] [[retry-after-ms 250]] [[fail-times 2]]')).toEqual([
      { kind: 'reset' }, { kind: 'reset-mid' }, { kind: 'malformed-sse' }, { kind: 'no-finish' }, { kind: 'oversized' },
      { kind: 'retry-after', n: 3 }, { kind: 'retry-after-ms', n: 250 }, { kind: 'fail-times', n: 2 },
    ]);
    expect(parseDirectives('[[reset now]] [[retry-after soon]] [[fail-times]] [[oversized 5]]')).toEqual([]);
  });

  it('[[reset]] drops the connection before any header', async () => {
    await expect(call('[[reset]]')).rejects.toThrow();
    expect(sim.requests.at(-1)).toMatchObject({ error: 'reset', firstByteAt: null });
  });

  it('[[reset-mid]] drops it after part of the content, with no finish and no error event', async () => {
    const r = await call('[[say one two three four five six seven eight nine ten eleven twelve]] [[reset-mid]]');
    expect(r.status).toBe(200);
    expect(r.broke).toBe(true);
    const events = payloads(r.text).map((p) => JSON.parse(p) as { choices: { delta: { content?: string }; finish_reason: string | null }[] });
    const content = events.map((e) => e.choices[0]!.delta.content ?? '').join('');
    expect(content.length).toBeGreaterThan(0);
    expect('one two three four five six seven eight nine ten eleven twelve'.startsWith(content)).toBe(true);
    expect(content.length).toBeLessThan(40);
    expect(events.every((e) => e.choices[0]!.finish_reason === null)).toBe(true);
  });

  it('[[malformed-sse]] sends an event that is not JSON after the role chunk, and ends', async () => {
    const r = await call('[[malformed-sse]]');
    const data = payloads(r.text);
    expect(r.broke).toBe(false);
    expect(data).toHaveLength(2);
    expect(JSON.parse(data[0]!)).toMatchObject({ choices: [{ delta: { role: 'assistant' } }] });
    expect(() => JSON.parse(data[1]!)).toThrow();
  });

  it('[[no-finish]] ends after the content with no finish reason and no [DONE]', async () => {
    const r = await call('[[say all of it]] [[no-finish]]');
    const data = payloads(r.text);
    expect(data).not.toContain('[DONE]');
    const events = data.map((p) => JSON.parse(p) as { choices: { delta: { content?: string }; finish_reason: string | null }[] });
    expect(events.map((e) => e.choices[0]!.delta.content ?? '').join('')).toBe('all of it');
    expect(events.every((e) => e.choices[0]!.finish_reason === null)).toBe(true);
  });

  it('[[oversized]] adds 4 MiB of content to a stream, and of message to an error', async () => {
    const r = await call('[[say tail]] [[oversized]]');
    expect(r.text.length).toBeGreaterThan(4 * 1024 * 1024);
    expect(payloads(r.text).at(-1)).toBe('[DONE]');
    const e = await call('[[error 500]] [[oversized]]', false);
    expect(e.status).toBe(500);
    expect(e.text.length).toBeGreaterThan(4 * 1024 * 1024);
    expect(JSON.parse(e.text)).toMatchObject({ error: { code: 'server_error' } });
  });

  it('[[retry-after N]] and [[retry-after-ms N]] put their header on the error', async () => {
    const r = await call('[[error 429]] [[retry-after 3]]', false);
    expect([r.status, r.headers.get('retry-after'), r.headers.get('retry-after-ms')]).toEqual([429, '3', null]);
    const ms = await call('[[error 503]] [[retry-after-ms 250]]', false);
    expect([ms.status, ms.headers.get('retry-after'), ms.headers.get('retry-after-ms')]).toEqual([503, null, '250']);
  });

  it('[[fail-times N]] fails the first N requests with the same body only, then answers; reset forgets', async () => {
    const text = `[[say fine]] [[error 503]] [[fail-times 2]] ${Date.now()}`;
    expect((await call(text, false)).status).toBe(503);
    // Another body is counted apart.
    expect((await call(`${text} other`, false)).status).toBe(503);
    expect((await call(text, false)).status).toBe(503);
    const third = await call(text, false);
    expect(third.status).toBe(200);
    expect(JSON.parse(third.text)).toMatchObject({ choices: [{ message: { content: 'fine' } }] });
    expect((await call(text, false)).status).toBe(200);
    sim.reset();
    expect((await call(text, false)).status).toBe(503);
    const reset = `[[reset]] [[fail-times 1]] ${Date.now()}`;
    await expect(call(reset)).rejects.toThrow();
    expect((await call(reset)).status).toBe(200);
  });
});
