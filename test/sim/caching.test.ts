import { afterEach, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { renderPrompt } from '../../src/sim/tokens.js';
import type { WireMessage } from '../../src/sim/request.js';
import type { SimOptions } from '../../src/sim/types.js';
import { fixedClock, post, text, user } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(opts: SimOptions = {}): Promise<Sim> {
  sim = await createSim({ clock: fixedClock, ...opts });
  return sim;
}

const system = { role: 'system', content: text(1500, 'sys') };
const cachedOf = (json: { usage: { prompt_tokens_details: { cached_tokens: number } } }) => json.usage.prompt_tokens_details.cached_tokens;

describe('prefix cache', () => {
  it('a request that appends to another reads its whole prompt, rounded down to 128', async () => {
    const s = await start();
    const first = [system, user(`${text(700, 'u')} [[say noted]]`)];
    const a = await post(s, { model: 'm', messages: first });
    expect(a.status).toBe(200);
    const t1 = a.json.usage.prompt_tokens as number;
    expect(t1).toBeGreaterThan(2000);
    expect(cachedOf(a.json)).toBe(0);

    const second = [...first, a.json.choices[0].message, user('and then?')];
    const b = await post(s, { model: 'm', messages: second });
    expect(b.json.usage.prompt_tokens).toBeGreaterThan(t1);
    expect(cachedOf(b.json)).toBe(Math.floor(t1 / 128) * 128);
    expect(s.requests.map((r) => r.cachedTokens)).toEqual([0, Math.floor(t1 / 128) * 128]);

    // A change early in the prompt misses from that block on.
    const edited = [{ role: 'system', content: 'X' + system.content.slice(1) }, ...second.slice(1)];
    const c = await post(s, { model: 'm', messages: edited });
    expect(cachedOf(c.json)).toBe(0);
  });

  it('a prompt ending in a partial token ends inside its last block: what extends it reads one block fewer', async () => {
    // Tokens are 4-byte chunks, the last partial chunk a token too (src/sim/tokens.ts): a prompt of
    // exactly 16 blocks of tokens whose last token is 2 bytes holds only 15 whole blocks of bytes.
    const s = await start();
    const pad = (n: number) => [system, user(`${'x'.repeat(n)} [[say noted]]`)];
    let n = 2000;
    while (Buffer.byteLength(renderPrompt([], pad(n) as WireMessage[])) % 512 !== 510) n++;
    const first = pad(n);
    const a = await post(s, { model: 'm', messages: first });
    const t1 = a.json.usage.prompt_tokens as number;
    expect(t1 % 128).toBe(0);
    const b = await post(s, { model: 'm', messages: [...first, a.json.choices[0].message, user('and then?')] });
    expect(cachedOf(b.json)).toBe(t1 - 128);
    // The same prompt again reads all of it.
    const again = await post(s, { model: 'm', messages: first });
    expect(cachedOf(again.json)).toBe(t1);
  });

  it('neither reads nor writes prompts under 1024 tokens', async () => {
    const s = await start();
    const small = { model: 'm', messages: [user(text(900))] };
    const a = await post(s, small);
    expect(a.json.usage.prompt_tokens).toBeLessThan(1024);
    const b = await post(s, small);
    expect(cachedOf(b.json)).toBe(0);
    expect(s.stats().replicas[0]!.blocks).toBe(0);

    const big = { model: 'm', messages: [user(text(1100))] };
    await post(s, big);
    const again = await post(s, big);
    expect(again.json.usage.prompt_tokens).toBeGreaterThanOrEqual(1024);
    expect(cachedOf(again.json)).toBe(1024);
  });

  it('expires blocks after the TTL; a read within the TTL refreshes them', async () => {
    const s = await start({ ttlMs: 60_000 });
    const body = { model: 'm', messages: [user(text(2000))] };
    await post(s, body);
    s.advance(59_000);
    expect(cachedOf((await post(s, body)).json)).toBe(1920);
    s.advance(59_000); // 118 s after the write, 59 s after the refreshing read
    expect(cachedOf((await post(s, body)).json)).toBe(1920);
    s.advance(60_000);
    expect(cachedOf((await post(s, body)).json)).toBe(0);
    expect(s.requests.at(-1)!.receivedAt).toBe(fixedClock() + 178_000);
  });

  it('reports prompt and cached totals per replica', async () => {
    const s = await start({ replicas: 2 });
    const body = { model: 'm', messages: [user(text(1300))] };
    await post(s, body);
    await post(s, body);
    const stats = s.stats();
    expect(stats.requests).toBe(2);
    expect(stats.ok).toBe(2);
    expect(stats.promptTokens).toBe(2 * s.requests[0]!.promptTokens);
    expect(stats.cachedTokens).toBe(1280);
    const used = stats.replicas.find((r) => r.requests === 2)!;
    expect(used.cachedTokens).toBe(1280);
    expect(used.blocks).toBe(10);
    expect(stats.replicas.reduce((n, r) => n + r.requests, 0)).toBe(2);
  });
});

describe('replicas and routing', () => {
  /** An agent loop of `turns` requests, each appending to the last; returns total cached / prompt. */
  async function session(s: Sim, turns: number, headers: Record<string, string> = {}, bodyKey?: string) {
    const messages: unknown[] = [system, user(`${text(200, 'task')} [[say step]]`)];
    let prompt = 0;
    let cached = 0;
    for (let i = 0; i < turns; i++) {
      const r = await post(s, { model: 'm', messages, ...(bodyKey === undefined ? {} : { prompt_cache_key: bodyKey }) }, { headers });
      prompt += r.json.usage.prompt_tokens;
      cached += cachedOf(r.json);
      messages.push(r.json.choices[0].message, user(`${text(150, `t${i}`)} [[say step]]`));
    }
    return { prompt, cached };
  }

  it('a session key keeps a conversation on one replica; random routing loses hits', async () => {
    const keyed = await start({ replicas: 8, routing: 'random', seed: 3 });
    const withKey = await session(keyed, 8, { 'x-session-id': 'abc' });
    expect(new Set(keyed.requests.map((r) => r.replica)).size).toBe(1);
    expect(keyed.requests.every((r) => r.sessionKey === 'abc' && r.sessionKeySource === 'x-session-id')).toBe(true);
    await keyed.close();

    const random = await start({ replicas: 8, routing: 'random', seed: 3 });
    const without = await session(random, 8);
    expect(new Set(random.requests.map((r) => r.replica)).size).toBeGreaterThan(1);
    expect(random.requests.every((r) => r.sessionKey === null)).toBe(true);
    expect(withKey.cached).toBeGreaterThan(without.cached);
    // With the key every turn after the first reads the whole previous prompt (rounded).
    expect(withKey.cached / withKey.prompt).toBeGreaterThan(0.75);
  });

  it('prefers body prompt_cache_key over headers, and reads x-session-affinity', async () => {
    const s = await start({ replicas: 4 });
    await post(s, { model: 'm', messages: [user('a')], prompt_cache_key: 'body' }, { headers: { 'x-session-id': 'hdr' } });
    await post(s, { model: 'm', messages: [user('a')] }, { headers: { 'x-session-affinity': 'aff' } });
    expect(s.requests.map((r) => [r.sessionKey, r.sessionKeySource])).toEqual([
      ['body', 'prompt_cache_key'],
      ['aff', 'x-session-affinity'],
    ]);
  });

  it('prefix routing sends prompts with the same first 256 tokens to the same replica', async () => {
    const s = await start({ replicas: 8, routing: 'prefix' });
    const withKeyless = await session(s, 6);
    expect(new Set(s.requests.map((r) => r.replica)).size).toBe(1);
    expect(withKeyless.cached).toBeGreaterThan(0);
    await post(s, { model: 'm', messages: [user(text(400, 'other'))] });
    await post(s, { model: 'm', messages: [user(text(400, 'third'))] });
    await post(s, { model: 'm', messages: [user(text(400, 'fourth'))] });
    expect(new Set(s.requests.map((r) => r.replica)).size).toBeGreaterThan(1);
  });

  it('session routing puts every keyless request on one replica', async () => {
    const s = await start({ replicas: 8, routing: 'session' });
    for (const tag of ['a', 'b', 'c', 'd']) await post(s, { model: 'm', messages: [user(text(50, tag))] });
    expect(new Set(s.requests.map((r) => r.replica)).size).toBe(1);
  });

  it('reset() forgets caches, records and the PRNG position', async () => {
    const s = await start({ replicas: 4, routing: 'random', seed: 9 });
    const body = { model: 'm', messages: [user(text(1200))] };
    for (let i = 0; i < 4; i++) await post(s, body);
    const replicas = s.requests.map((r) => r.replica);
    s.reset();
    expect(s.requests).toHaveLength(0);
    expect(s.stats().replicas.every((r) => r.blocks === 0)).toBe(true);
    for (let i = 0; i < 4; i++) await post(s, body);
    expect(s.requests.map((r) => r.replica)).toEqual(replicas);
  });
});
