/**
 * GeminiCaches with a fake `cachedContents` API and a clock: made at the minimum, kept while the
 * prefix holds, replaced when it moves or doubles, extended past half its TTL, deleted when idle
 * and at close, refused sizes not asked again, storage counted in token-hours.
 */
import { describe, expect, it } from 'vitest';
import { resolveRoute, withSimulator } from '../../src/config/routes.js';
import type { EncodedRequest } from '../../src/core/route.js';
import type { NeutralMessage, NeutralRequest } from '../../src/core/types.js';
import { GeminiCaches, type CacheApi } from '../../src/proxy/gemini-caches.js';
import { loadToml } from '../config/helpers.js';

const config = withSimulator(loadToml([
  '[providers.gm]', 'preset = "gemini"', 'base_url = "https://g.example/v1beta"', 'api_key_env = ""',
  '[models.flash]', 'provider = "gm"', 'model = "gemini-2.5-flash"', 'gemini_cache = "explicit"',
].join('\n')), 'http://127.0.0.1:1');
const route = resolveRoute(config, 'flash');
const resolveImage = () => ({ mime: 'image/png', base64: 'AA==' });
const MIN = 60_000;

class FakeApi implements CacheApi {
  readonly calls: string[] = [];
  refuse = false;
  #n = 0;
  async create(_t: unknown, req: EncodedRequest) {
    const body = JSON.parse(req.body as string) as { contents: unknown[] };
    this.calls.push(`create ${body.contents.length}`);
    if (this.refuse) throw new Error('HTTP 400 Cached content is too small');
    this.#n++;
    return { name: `cachedContents/c${this.#n}`, tokens: 1000 * this.#n };
  }
  async extend(_t: unknown, req: EncodedRequest) {
    this.calls.push(`extend ${req.path}`);
    if (this.refuse) throw new Error('HTTP 403 CachedContent not found');
  }
  async delete(_t: unknown, name: string) {
    this.calls.push(`delete ${name}`);
  }
}

/** A conversation of `turns` user/model pairs (~`size` * 2 / 3 estimated tokens each), and a last user turn. */
function conversation(turns: number, size = 450, head = 'u0'): NeutralRequest {
  const messages: NeutralMessage[] = [{ role: 'system', content: 'system' }];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: i === 0 ? `${head} ${'w '.repeat(size)}` : `u${i} ${'w '.repeat(size)}` });
    messages.push({ role: 'assistant', content: `a${i}` });
  }
  messages.push({ role: 'user', content: 'last' });
  return { model: 'gemini-2.5-flash', messages, tools: [], params: {} };
}

function world() {
  let now = 1_000_000;
  const api = new FakeApi();
  const stored: [string, number][] = [];
  const caches = new GeminiCaches(api, { now: () => now, idleMs: 15 * MIN, minTokens: 1024, stored: (r, tokenHours) => stored.push([r.name, tokenHours]) });
  return { api, caches, stored, advance: (ms: number) => (now += ms), use: (session: string, req: NeutralRequest) => caches.use(session, route, req, undefined, resolveImage) };
}

describe('GeminiCaches', () => {
  it('makes nothing below the minimum, then one entry the next requests read while the prefix holds', async () => {
    const w = world();
    expect(await w.use('s', conversation(1))).toBeUndefined();
    expect(w.api.calls).toStrictEqual([]);
    const made = await w.use('s', conversation(4));
    // Kept until the idle time from each use, unless a later request uses it.
    expect(made).toStrictEqual({ name: 'cachedContents/c1', messages: 9, tokens: 1000, created: true, keptUntil: 1_000_000 + 15 * MIN });
    w.advance(MIN);
    expect(await w.use('s', conversation(5))).toStrictEqual({ name: 'cachedContents/c1', messages: 9, tokens: 1000, created: false, keptUntil: 1_000_000 + 16 * MIN });
    expect(w.api.calls).toStrictEqual(['create 8']);
  });

  it('replaces the entry when a trim changes what it holds, deleting the old one', async () => {
    const w = world();
    await w.use('s', conversation(4));
    const trimmed = await w.use('s', conversation(5, 450, '[elided]'));
    expect(trimmed).toMatchObject({ name: 'cachedContents/c2', created: true });
    expect(w.api.calls).toStrictEqual(['create 8', 'delete cachedContents/c1', 'create 10']);
  });

  it('replaces the entry once the conversation has doubled what it holds', async () => {
    const w = world();
    await w.use('s', conversation(4));
    expect(await w.use('s', conversation(8))).toMatchObject({ name: 'cachedContents/c1' });
    expect(await w.use('s', conversation(9))).toMatchObject({ name: 'cachedContents/c2', messages: 19, created: true });
  });

  it('extends the TTL once less than half of it is left, while the session is live', async () => {
    const w = world();
    await w.use('s', conversation(4));
    w.advance(7 * MIN);
    await w.use('s', conversation(4));
    expect(w.api.calls).toStrictEqual(['create 8']);
    w.advance(2 * MIN);
    await w.use('s', conversation(4));
    expect(w.api.calls).toStrictEqual(['create 8', 'extend /cachedContents/c1?updateMask=ttl']);
  });

  it('an entry whose TTL could not be extended is not named again: that request goes whole, the next makes a new one', async () => {
    const w = world();
    await w.use('s', conversation(4));
    w.advance(9 * MIN);
    w.api.refuse = true;
    expect(await w.use('s', conversation(4))).toBeUndefined();
    expect(w.api.calls).toStrictEqual(['create 8', 'extend /cachedContents/c1?updateMask=ttl', 'delete cachedContents/c1']);
    w.api.refuse = false;
    expect(await w.use('s', conversation(5))).toMatchObject({ name: 'cachedContents/c2', created: true });
  });

  it('deletes an idle session\'s entry (another session\'s request sweeps), and the rest at close; storage in token-hours', async () => {
    const w = world();
    await w.use('a', conversation(4));
    w.advance(10 * MIN);
    await w.use('b', conversation(4));
    w.advance(6 * MIN);
    expect(await w.caches.sweep()).toBe(1);
    expect(w.api.calls).toStrictEqual(['create 8', 'create 8', 'delete cachedContents/c1']);
    expect(w.caches.entryOf('a')).toBeUndefined();
    await w.caches.close();
    expect(w.api.calls.at(-1)).toBe('delete cachedContents/c2');
    // c1: 1,000 tokens for 16 minutes; c2: 2,000 tokens for 6 minutes.
    expect(w.caches.totals()).toMatchObject({ live: 0, created: 2, deleted: 2, tokensWritten: 3000 });
    expect(w.caches.totals().tokenHours).toBeCloseTo((1000 * 16 + 2000 * 6) / 60, 6);
    // Each entry's token-hours reach the metrics as it ends.
    expect(w.stored.map(([r]) => r)).toStrictEqual(['flash', 'flash']);
    expect(w.stored[0]![1]).toBeCloseTo((1000 * 16) / 60, 6);
    expect(w.stored[1]![1]).toBeCloseTo((2000 * 6) / 60, 6);
  });

  it('does not ask again for a prefix the upstream refused, and the request goes whole', async () => {
    const w = world();
    w.api.refuse = true;
    expect(await w.use('s', conversation(4))).toBeUndefined();
    expect(await w.use('s', conversation(4))).toBeUndefined();
    expect(w.api.calls).toStrictEqual(['create 8']);
    w.api.refuse = false;
    expect(await w.use('s', conversation(5))).toMatchObject({ created: true });
  });
});
