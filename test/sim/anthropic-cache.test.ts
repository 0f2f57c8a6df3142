import { afterEach, describe, expect, it } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';
import { messages, userText } from './anthropic-client.js';
import { fixedClock, text } from './client.js';

let sim: Sim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});
async function start(opts: SimOptions = {}): Promise<Sim> {
  sim = await createSim({ clock: fixedClock, ...opts });
  return sim;
}

type Json = Record<string, unknown>;
const EPHEMERAL = { type: 'ephemeral' };
const HOUR = { type: 'ephemeral', ttl: '1h' };
const system = (cache?: Json) => [{ type: 'text', text: text(1500, 'sys'), ...(cache === undefined ? {} : { cache_control: cache }) }];
const base = { model: 'claude-sim', max_tokens: 1024 };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const usageOf = async (s: Sim, body: Json): Promise<any> => {
  const r = await messages(s, body);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const u = r.json.usage;
  // The three input figures always add up to the whole prompt, as the API documents.
  expect(u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens).toBe(s.anthropicRequests.at(-1)?.promptTokens);
  expect(u.cache_creation.ephemeral_5m_input_tokens + u.cache_creation.ephemeral_1h_input_tokens).toBe(u.cache_creation_input_tokens);
  return { ...u, content: r.json.content };
};

describe('sim anthropic cache: only when asked', () => {
  it('neither writes nor reads without cache_control', async () => {
    const s = await start();
    const body = { ...base, system: system(), messages: [userText('q1')] };
    const a = await usageOf(s, body);
    const b = await usageOf(s, body);
    for (const u of [a, b]) expect([u.cache_creation_input_tokens, u.cache_read_input_tokens]).toStrictEqual([0, 0]);
    expect(b.input_tokens).toBeGreaterThan(1500);
    expect(s.anthropicRequests.map((r) => r.cacheMarkers)).toStrictEqual([0, 0]);
  });

  it("top-level: writes up to the last block; the next request reads exactly that prefix", async () => {
    const s = await start();
    const first = { ...base, cache_control: EPHEMERAL, system: system(), messages: [userText('q1 [[say noted]]')] };
    const a = await usageOf(s, first);
    expect(a.cache_read_input_tokens).toBe(0);
    expect(a.cache_creation_input_tokens).toBeGreaterThan(1500);
    expect(a.cache_creation.ephemeral_1h_input_tokens).toBe(0);
    expect(a.input_tokens).toBeLessThan(4); // only the closing marker after the last block

    const second = { ...first, messages: [...first.messages, { role: 'assistant', content: a.content }, userText('q2')] };
    const b = await usageOf(s, second);
    expect(b.cache_read_input_tokens).toBe(a.cache_creation_input_tokens);
    expect(b.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(s.anthropicRequests[1]?.cachedTokens).toBe(a.cache_creation_input_tokens);

    // Another model has a cache of its own.
    expect((await usageOf(s, { ...second, model: 'claude-other' })).cache_read_input_tokens).toBe(0);
  });

  it('explicit breakpoints: a marked system prompt is read whatever follows it', async () => {
    const s = await start();
    const a = await usageOf(s, { ...base, system: system(EPHEMERAL), messages: [userText('first question')] });
    const b = await usageOf(s, { ...base, system: system(EPHEMERAL), messages: [userText('a different question')] });
    expect(b.cache_read_input_tokens).toBe(a.cache_creation_input_tokens);
    expect(b.cache_creation_input_tokens).toBe(0);
  });

  it('splits creation by lifetime: a one-hour system breakpoint, a five-minute history one', async () => {
    const s = await start();
    const history = { role: 'user', content: [{ type: 'text', text: text(600, 'hist'), cache_control: EPHEMERAL }] };
    const u = await usageOf(s, { ...base, system: system(HOUR), messages: [history] });
    const sys = await usageOf(s, { ...base, system: system(HOUR), messages: [userText('x')] });
    expect(sys.cache_read_input_tokens).toBe(u.cache_creation.ephemeral_1h_input_tokens);
    expect(u.cache_creation.ephemeral_1h_input_tokens).toBeGreaterThan(1500);
    expect(u.cache_creation.ephemeral_5m_input_tokens).toBeGreaterThan(590);
  });

  it('does not cache a prefix under 1024 tokens', async () => {
    const s = await start();
    const body = { ...base, cache_control: EPHEMERAL, messages: [userText(text(900))] };
    await usageOf(s, body);
    const again = await usageOf(s, body);
    expect([again.cache_creation_input_tokens, again.cache_read_input_tokens]).toStrictEqual([0, 0]);
  });
});

describe('sim anthropic cache: lifetimes and lookback', () => {
  const body = (cache: Json) => ({ ...base, cache_control: cache, system: system(), messages: [userText('q')] });

  it('five-minute entries expire after the TTL; a read refreshes them', async () => {
    const s = await start();
    const a = await usageOf(s, body(EPHEMERAL));
    s.advance(200_000);
    expect((await usageOf(s, body(EPHEMERAL))).cache_read_input_tokens).toBe(a.cache_creation_input_tokens);
    s.advance(200_000);
    expect((await usageOf(s, body(EPHEMERAL))).cache_read_input_tokens).toBe(a.cache_creation_input_tokens);
    s.advance(301_000);
    const expired = await usageOf(s, body(EPHEMERAL));
    expect(expired.cache_read_input_tokens).toBe(0);
    expect(expired.cache_creation_input_tokens).toBe(a.cache_creation_input_tokens);
  });

  it('one-hour entries outlive the five-minute TTL', async () => {
    const s = await start();
    const a = await usageOf(s, body(HOUR));
    expect(a.cache_creation.ephemeral_1h_input_tokens).toBe(a.cache_creation_input_tokens);
    s.advance(30 * 60_000);
    expect((await usageOf(s, body(HOUR))).cache_read_input_tokens).toBe(a.cache_creation_input_tokens);
    s.advance(61 * 60_000);
    expect((await usageOf(s, body(HOUR))).cache_read_input_tokens).toBe(0);
  });

  it('looks back at most 20 blocks from a breakpoint for an earlier entry', async () => {
    const s = await start();
    const first = { ...base, cache_control: EPHEMERAL, system: system(), messages: [userText('start')] };
    const a = await usageOf(s, first);
    const blocks = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'text', text: `note ${i}` }));
    const near = { ...first, messages: [{ role: 'user', content: [{ type: 'text', text: 'start' }, ...blocks(19)] }] };
    expect((await usageOf(s, near)).cache_read_input_tokens).toBe(a.cache_creation_input_tokens);

    s.reset();
    await usageOf(s, first);
    const far = { ...first, messages: [{ role: 'user', content: [{ type: 'text', text: 'start' }, ...blocks(20)] }] };
    expect((await usageOf(s, far)).cache_read_input_tokens).toBe(0);
    // A second breakpoint where the old one was finds it again.
    s.reset();
    await usageOf(s, first);
    const marked = { ...far, messages: [{ role: 'user', content: [{ type: 'text', text: 'start', cache_control: EPHEMERAL }, ...blocks(20)] }] };
    expect((await usageOf(s, marked)).cache_read_input_tokens).toBe(a.cache_creation_input_tokens);
  });
});

describe('sim anthropic cache: message blocks keyed on tool_choice and thinking (anthropicMessageCacheKeys)', () => {
  const tools = [{ name: 'read', description: 'Read a file.', input_schema: { type: 'object' } }];
  // Breakpoints at the end of the system prompt and at the end of the messages.
  const body = (extra: Json) => ({ ...base, max_tokens: 4096, tools, system: system(EPHEMERAL), messages: [{ role: 'user', content: [{ type: 'text', text: `${text(1500, 'msg')} [[say ok]]`, cache_control: EPHEMERAL }] }], ...extra });

  it('a changed tool_choice or thinking reads the tools and system only; the same ones read everything', async () => {
    const s = await start();
    const first = await usageOf(s, body({}));
    expect(first.cache_read_input_tokens).toBe(0);
    const same = await usageOf(s, body({ tool_choice: { type: 'auto' } }));
    // An explicit `auto` is the default: the whole prompt is read.
    expect(same.cache_read_input_tokens).toBe(s.anthropicRequests.at(-1)!.promptTokens - same.input_tokens);
    expect(same.cache_creation_input_tokens).toBe(0);
    for (const changed of [{ tool_choice: { type: 'none' } }, { thinking: { type: 'enabled', budget_tokens: 2048 } }, { output_config: { effort: 'low' } }]) {
      const u = await usageOf(s, body(changed));
      expect(u.cache_read_input_tokens, JSON.stringify(changed)).toBeGreaterThan(1500);
      expect(u.cache_read_input_tokens, JSON.stringify(changed)).toBeLessThan(same.cache_read_input_tokens - 1000);
    }
  });

  it('on by default; asked off, the message cache holds whatever the parameters', async () => {
    const strict = await start();
    await usageOf(strict, body({}));
    expect((await usageOf(strict, body({ tool_choice: { type: 'none' } }))).cache_creation_input_tokens).toBeGreaterThan(0);
    const s = await start({ anthropicMessageCacheKeys: false });
    await usageOf(s, body({}));
    const u = await usageOf(s, body({ tool_choice: { type: 'none' } }));
    expect(u.cache_creation_input_tokens).toBe(0);
  });
});
