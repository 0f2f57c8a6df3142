/**
 * Gemini's explicit context caches end to end (client -> proxy -> tap -> the simulator's native
 * Gemini mode, which keeps `cachedContents` on a clock the test moves): the entry is made once the
 * prefix is long enough, requests name it, leave the cached part out and read it; a trim replaces
 * it; an idle session's entry is deleted, and the proxy's close deletes the rest; replay holds.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { runAgent } from '../../bench/agent.js';
import { startGeminiCacheWorld, type GeminiCacheWorld } from '../../bench/gemini-cache.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import type { SessionsReport } from '../../src/stats/collect.js';
import { readSessions, replayAll, runCli, startTap, tag, until, type Tap, type World } from './harness.js';

let w: GeminiCacheWorld;
let tap: Tap;
beforeAll(async () => {
  w = await startGeminiCacheWorld({
    idleMinutes: 15,
    upstream: async (origin) => (tap = await startTap(origin)).origin,
    models: `
[models.flash]
provider = "gm"
model = "gemini-2.5-flash"
gemini_cache = "explicit"
price = { input = 0.3, cache_read = 0.03, output = 2.5, cache_storage = 1 }

[models.small]
provider = "gm"
model = "gemini-2.5-flash"
gemini_cache = "explicit"
context = 9000
output_reserve = 1000
max_result_tokens = 2000
`,
  });
}, 30_000);
afterAll(async () => {
  await w?.close();
  await tap?.close();
});

const isGenerate = (path: string) => path.includes(':streamGenerateContent') || path.includes(':generateContent');
const generates = (from: number) => tap.requests.slice(from).filter((r) => isGenerate(r.path));
const cacheCalls = (from: number, method: 'created' | 'deleted') => tap.requests.slice(from).filter((r) => r.path.startsWith('/v1beta/cachedContents') && (method === 'created' ? typeof r.body === 'object' && r.body?.model !== undefined : r.body === ''));
const filler = (n: number) => Array.from({ length: 40 }, (_, k) => `word${n}x${k} carries some weight`).join(' ');

async function sessionWith(text: string): Promise<LogEvent[]> {
  for (const events of (await readSessions(w as unknown as World)).values()) {
    if (events.some((e) => e.type === 'client.msg' && e.msg.role === 'system' && e.msg.content === text)) return events;
  }
  throw new Error(`no session with system prompt ${text}`);
}
const requestsOf = (events: LogEvent[]) => events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');

describe('gemini_cache = "explicit"', () => {
  it('makes the entry once the prefix is long enough; later requests name it, leave the cached part out and read it', async () => {
    const from = tap.requests.length;
    const simFrom = w.sim.geminiRequests.length;
    const system = `Be brief. ${tag('gc-grow')}`;
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'system', content: system }];
    for (let i = 0; i < 8; i++) {
      messages.push({ role: 'user', content: `Turn ${i}: ${filler(i)} [[say noted ${i}.]]` });
      const r = await w.client.chat.completions.create({ model: 'flash', messages });
      messages.push({ role: 'assistant', content: r.choices[0]!.message.content });
    }
    const sent = generates(from);
    expect(sent.map((r) => r.status)).toStrictEqual(Array(8).fill(200));
    const asked = cacheCalls(from, 'created');
    // The proxy asks at 1,024 tokens by its estimate; the upstream counts its own, and may refuse.
    for (const r of asked.filter((x) => x.status !== 200)) expect(r.response).toMatch(/Cached content is too small/);
    const created = asked.filter((r) => r.status === 200);
    expect(created).toHaveLength(1);
    const entry = JSON.parse(created[0]!.response) as { name: string; usageMetadata: { totalTokenCount: number } };
    expect(entry.usageMetadata.totalTokenCount).toBeGreaterThanOrEqual(1024);
    // Held by the entry: the system instruction and the conversation's head.
    expect(created[0]!.body.systemInstruction).toStrictEqual({ parts: [{ text: system }] });
    const first = sent.findIndex((r) => r.body.cachedContent !== undefined);
    expect(first).toBeGreaterThan(0);
    for (const r of sent.slice(0, first)) expect(r.body.systemInstruction).toBeDefined();
    for (const [k, r] of sent.slice(first).entries()) {
      expect(r.body.cachedContent).toBe(entry.name);
      expect(r.body.systemInstruction).toBeUndefined();
      // The whole conversation is 2 * (first + k) + 1 contents; the request carries what follows the entry's.
      expect(r.body.contents.length).toBe(2 * (first + k) + 1 - created[0]!.body.contents.length);
      expect(r.body.contents[0].role).toBe('user');
    }
    const sims = w.sim.geminiRequests.slice(simFrom);
    for (const s of sims.slice(first)) {
      expect(s.cachedContent).toBe(entry.name);
      expect(s.cachedTokens).toBeGreaterThanOrEqual(entry.usageMetadata.totalTokenCount);
    }
    // The log says which request made it and which read it.
    const hints = requestsOf(await sessionWith(system)).map((e) => e.hints?.gemini_cache);
    expect(hints.slice(0, first)).toStrictEqual(Array(first).fill(undefined));
    expect(hints[first]).toMatchObject({ name: entry.name, tokens: entry.usageMetadata.totalTokenCount, created: true });
    const reqs = requestsOf(await sessionWith(system));
    for (const [k, h] of hints.entries()) {
      if (k <= first) continue;
      expect(h).toStrictEqual({ name: entry.name, messages: hints[first]!.messages, tokens: entry.usageMetadata.totalTokenCount, kept_until: expect.any(String) });
      // Kept until idle_minutes after the request that read it.
      expect(Date.parse(h!.kept_until!) - Date.parse(reqs[k]!.ts)).toBeGreaterThan(15 * 60_000 - 1000);
      expect(Date.parse(h!.kept_until!) - Date.parse(reqs[k]!.ts)).toBeLessThanOrEqual(15 * 60_000);
    }
  });

  it('a trim replaces the entry: the request that trims never names an entry holding what it took out', async () => {
    const from = tap.requests.length;
    const system = `You are a careful coding agent. ${tag('gc-trim')}`;
    await runAgent(w.client, 'small', { requests: 24, seed: 7, system, resultBytes: 1500, stream: true });
    expect(generates(from).every((r) => r.status === 200)).toBe(true);
    const reqs = requestsOf(await sessionWith(system));
    const trims = reqs.map((r, k) => (r.elided.length > 0 ? k : -1)).filter((k) => k > 0);
    expect(trims.length).toBeGreaterThan(0);
    let replaced = 0;
    for (const k of trims) {
      const before = reqs[k - 1]!.hints?.gemini_cache;
      const now = reqs[k]!.hints?.gemini_cache;
      // An entry that holds only what the trim left alone may stay; here the trims reach into it.
      if (before === undefined || (now !== undefined && now.name === before.name)) continue;
      replaced++;
      if (now !== undefined) expect(now.created).toBe(true);
    }
    expect(replaced).toBeGreaterThan(0);
    expect(cacheCalls(from, 'created').length).toBeGreaterThan(1);
    const deleted = await until(() => cacheCalls(from, 'deleted').every((r) => r.status === 200) && cacheCalls(from, 'deleted'));
    expect(deleted.length).toBeGreaterThan(0);
  });

  it('deletes the entries of sessions idle longer than idle_minutes', async () => {
    const live = w.sim.stats().gemini.cachedContents.live;
    expect(live).toBeGreaterThan(0);
    w.advance(15 * 60_000 + 1);
    const from = tap.requests.length;
    // Any request sweeps first (the timer does too, each minute of real time).
    await w.client.chat.completions.create({ model: 'flash', messages: [{ role: 'user', content: `${tag('gc-idle')} [[say hi.]]` }] });
    // The request does not wait for the deletes.
    const deleted = await until(() => cacheCalls(from, 'deleted').filter((r) => r.status === 200).length === live && cacheCalls(from, 'deleted'));
    expect(deleted).toHaveLength(live);
    expect(w.sim.stats().gemini.cachedContents.live).toBe(0);
    expect(w.caches().totals().live).toBe(0);
  });

  it('prices the storage from the log as the proxy held it: proxy sessions and the metrics agree with what the caches counted', async () => {
    // Every entry so far has ended (replaced at a trim, or deleted as idle just now).
    const held = w.caches().totals().tokenHours;
    expect(held).toBeGreaterThan(0);
    const r = await runCli(['sessions', '--json', '--data-dir', join(w.dir, 'data'), '--config', join(w.dir, 'config.toml')]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as SessionsReport;
    const byId = new Map(report.sessions.map((s) => [s.id, s]));
    let logged = 0;
    for (const [id, events] of await readSessions(w as unknown as World)) {
      const made = requestsOf(events).filter((e) => e.hints?.gemini_cache?.created === true).length;
      const s = byId.get(id)!;
      if (made === 0) {
        expect(s.storage_token_hours).toBeNull();
        continue;
      }
      expect(s.storage_token_hours).toBeGreaterThan(0);
      logged += s.storage_token_hours!;
      // Priced: flash has price.cache_storage, small has none (its cost is unknown, not 0).
      if (s.models.includes('small')) expect(s.storage_usd).toBeNull();
      else expect(s.storage_usd).toBeCloseTo(s.storage_token_hours! * 1e-6, 12);
    }
    // The log ends an idle entry at its last use plus idle_minutes; the sweep came a moment later.
    expect(logged / held).toBeGreaterThan(0.99);
    expect(logged / held).toBeLessThanOrEqual(1.000001);
    const metrics = await (await fetch(`${w.proxy.url}/metrics`)).text();
    const counted = metrics.split('\n').filter((l) => l.startsWith('proxy_cache_storage_token_hours_total{')).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
    expect(counted).toBeCloseTo(held, 6);
    expect(metrics).toMatch(/proxy_cost_usd_total\{provider="gm",model="flash",kind="cache_storage"\} [0-9.e-]+/);
  });

  it('replays every request it logged', async () => {
    const result = await replayAll(w as unknown as World);
    expect(result.code, result.stderr).toBe(0);
  });

  it('deletes what is left when the proxy closes', async () => {
    const system = `Close test. ${tag('gc-close')}`;
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'system', content: `${system} ${filler(99)} ${filler(98)} ${filler(97)} ${filler(96)}` }];
    messages.push({ role: 'user', content: '[[say fine.]]' });
    await w.client.chat.completions.create({ model: 'flash', messages });
    expect(w.sim.stats().gemini.cachedContents.live).toBe(1);
    await w.proxy.app.close();
    expect(w.sim.stats().gemini.cachedContents.live).toBe(0);
  });
});
