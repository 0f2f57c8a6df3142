/**
 * Explicit context caches on the native Gemini wire: cachedContents create, get, list, patch (TTL),
 * delete on the simulator's clock, requests that read them, and their storage in token-hours.
 */
import { afterAll, beforeEach, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { call, generate, MODEL, user } from './gemini-client.js';

let sim: Sim;
beforeAll(async () => {
  // A clock that only advance() moves, so storage figures are exact.
  sim = await createSim({ clock: () => Date.UTC(2026, 0, 1) });
});
beforeEach(() => {
  sim.reset();
});
afterAll(async () => {
  await sim.close();
});

const LONG = 'A long stable prefix: the project, its rules and its files. '.repeat(100);
const SYSTEM = { parts: [{ text: LONG }] };
const create = (body: unknown) => call(sim, '/v1beta/cachedContents', body);

describe('cachedContents', () => {
  it('creates an entry with its token count and expiry, and lists and gets it', async () => {
    const r = await create({ model: `models/${MODEL}`, systemInstruction: SYSTEM, contents: [user('the files')], ttl: '600s', displayName: 'proj' });
    expect(r.status).toBe(200);
    expect(r.json.name).toMatch(/^cachedContents\//);
    expect(r.json.model).toBe(`models/${MODEL}`);
    expect(r.json.usageMetadata.totalTokenCount).toBeGreaterThanOrEqual(1024);
    expect(Date.parse(r.json.expireTime) - Date.parse(r.json.createTime)).toBe(600_000);
    expect(r.json.contents).toBeUndefined();
    const got = await call(sim, `/v1beta/${r.json.name}`);
    expect(got.json).toEqual(r.json);
    const list = await call(sim, '/v1beta/cachedContents');
    expect(list.json.cachedContents.map((c: { name: string }) => c.name)).toEqual([r.json.name]);
  });

  it('refuses a cache below the minimum, and ttl with expireTime', async () => {
    const small = await create({ model: MODEL, contents: [user('short')] });
    expect(small.status).toBe(400);
    expect(small.json.error.message).toMatch(/Cached content is too small. total_token_count=\d+, min_total_token_count=1024/);
    const both = await create({ model: MODEL, systemInstruction: SYSTEM, ttl: '60s', expireTime: '2030-01-01T00:00:00Z' });
    expect(both.status).toBe(400);
  });

  it('a request naming the cache reads its whole prefix; its prompt counts the cache', async () => {
    const c = await create({ model: `models/${MODEL}`, systemInstruction: SYSTEM, contents: [user('the files')] });
    const tokens = c.json.usageMetadata.totalTokenCount;
    const r = await generate(sim, { cachedContent: c.json.name, contents: [user('question [[say a]]')] });
    expect(r.status).toBe(200);
    expect(r.json.usageMetadata.cachedContentTokenCount).toBe(tokens);
    expect(r.json.usageMetadata.promptTokenCount).toBeGreaterThan(tokens);
    expect(sim.geminiRequests.at(-1)!.cachedContent).toBe(c.json.name);
    // The same prompt sent whole renders the same: the cache is a prefix of it.
    const whole = await call(sim, `/v1beta/models/${MODEL}:countTokens`, { generateContentRequest: { model: `models/${MODEL}`, systemInstruction: SYSTEM, contents: [user('the files'), user('question [[say a]]')] } });
    expect(whole.json.totalTokens).toBe(r.json.usageMetadata.promptTokenCount);
  });

  it('refuses a request that names the cache and sets a system instruction, or another model', async () => {
    const c = await create({ model: MODEL, systemInstruction: SYSTEM });
    const withSystem = await generate(sim, { cachedContent: c.json.name, systemInstruction: { parts: [{ text: 'x' }] }, contents: [user('q')] });
    expect(withSystem.status).toBe(400);
    expect(withSystem.json.error.message).toMatch(/CachedContent can not be used with GenerateContent request setting system_instruction, tools or tool_config/);
    const other = await generate(sim, { cachedContent: c.json.name, contents: [user('q')] }, 'gemini-2.5-pro');
    expect(other.status).toBe(400);
    expect(other.json.error.message).toMatch(/has to be the same/);
  });

  it('expires on the simulator clock; a patched ttl keeps it; a gone one is a 403', async () => {
    const c = await create({ model: MODEL, systemInstruction: SYSTEM, ttl: '60s' });
    sim.advance(50_000);
    const patched = await call(sim, `/v1beta/${c.json.name}?updateMask=ttl`, { ttl: '120s' }, { method: 'PATCH' });
    expect(patched.status).toBe(200);
    expect(Date.parse(patched.json.expireTime) - Date.parse(patched.json.updateTime)).toBe(120_000);
    sim.advance(100_000);
    expect((await generate(sim, { cachedContent: c.json.name, contents: [user('q')] })).status).toBe(200);
    sim.advance(30_000);
    const gone = await generate(sim, { cachedContent: c.json.name, contents: [user('q')] });
    expect(gone.status).toBe(403);
    expect(gone.json.error).toEqual({ code: 403, message: 'CachedContent not found (or permission denied)', status: 'PERMISSION_DENIED' });
    expect(sim.stats().gemini.cachedContents).toMatchObject({ live: 0, created: 1, expired: 1 });
  });

  it('refuses to patch anything but the expiry', async () => {
    const c = await create({ model: MODEL, systemInstruction: SYSTEM });
    const r = await call(sim, `/v1beta/${c.json.name}`, { displayName: 'x' }, { method: 'PATCH' });
    expect(r.status).toBe(400);
  });

  it('counts storage in token-hours, until deletion', async () => {
    const c = await create({ model: MODEL, systemInstruction: SYSTEM, ttl: '7200s' });
    const tokens: number = c.json.usageMetadata.totalTokenCount;
    sim.advance(1_800_000);
    expect(sim.stats().gemini.cachedContents.tokenHours).toBeCloseTo(tokens / 2, 6);
    const del = await call(sim, `/v1beta/${c.json.name}`, undefined, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.json).toEqual({});
    sim.advance(3_600_000);
    const stats = sim.stats().gemini.cachedContents;
    expect(stats).toMatchObject({ live: 0, deleted: 1, liveTokens: 0 });
    expect(stats.tokenHours).toBeCloseTo(tokens / 2, 6);
    expect((await call(sim, `/v1beta/${c.json.name}`)).status).toBe(403);
  });
});
