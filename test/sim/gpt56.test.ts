import { describe, expect, it } from 'vitest';
import type { Sim } from '../../src/sim/server.js';
import { post, simPerTest, text, user } from './client.js';

const start = simPerTest({ mode: 'gpt56' });

const MARK = { mode: 'explicit' } as const;
/** `<|end|>\n` after the last message's text: past the implicit breakpoint. */
const END_TOKENS = 2;
const stable = text(9000, 'dev');
const details = (json: { usage: { prompt_tokens_details: { cached_tokens: number; cache_write_tokens: number } } }) => json.usage.prompt_tokens_details;

async function responses(s: Sim, base: string, body: unknown) {
  const res = await fetch(`${base}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, json: (await res.json()) as any };
}

describe('GPT-5.6 mode: the cache works at breakpoints', () => {
  it('a stable developer prefix before a changing message reads nothing unmarked, all of it marked (codex #35300)', async () => {
    const s = await start();
    const plain = (q: string) => [{ role: 'developer', content: stable }, user(`${q} [[say ok]]`)];
    const a = await post(s, { model: 'gpt-5.6', messages: plain('first question') });
    expect(a.status).toBe(200);
    // The implicit breakpoint at the end of the user message's text wrote all but the closing tag, no 128-token rounding.
    expect(details(a.json)).toEqual({ cached_tokens: 0, cache_write_tokens: a.json.usage.prompt_tokens - END_TOKENS });
    const b = await post(s, { model: 'gpt-5.6', messages: plain('second question') });
    expect(details(b.json).cached_tokens).toBe(0);

    const marked = (q: string) => [{ role: 'developer', content: [{ type: 'text', text: stable, prompt_cache_breakpoint: MARK }] }, user(`${q} [[say ok]]`)];
    const c = await post(s, { model: 'gpt-5.6', messages: marked('third question') });
    // The marker's prefix is new (written); the rest is the implicit write.
    expect(details(c.json).cached_tokens).toBe(0);
    const d = await post(s, { model: 'gpt-5.6', messages: marked('fourth, longer question') });
    const prefixTokens = Math.ceil((Buffer.byteLength('<|start|>developer\n') + stable.length) / 4);
    expect(details(d.json).cached_tokens).toBe(prefixTokens);
    expect(details(d.json).cache_write_tokens).toBe(d.json.usage.prompt_tokens - END_TOKENS - prefixTokens);
  });

  it('an append-only conversation reads the previous implicit breakpoint', async () => {
    const s = await start();
    const first = [{ role: 'system', content: stable }, user('one [[say noted]]')];
    const a = await post(s, { model: 'gpt-5.6', messages: first });
    const second = [...first, a.json.choices[0].message, user('two [[say fine]]')];
    const b = await post(s, { model: 'gpt-5.6', messages: second });
    expect(details(b.json).cached_tokens).toBe(a.json.usage.prompt_tokens - END_TOKENS);
  });

  it('explicit mode without a marker caches nothing; with one it writes only the marked prefixes', async () => {
    const s = await start();
    const msgs = [{ role: 'system', content: stable }, user('hello [[say hi]]')];
    const a = await post(s, { model: 'gpt-5.6', messages: msgs, prompt_cache_options: { mode: 'explicit' } });
    expect(details(a.json)).toEqual({ cached_tokens: 0, cache_write_tokens: 0 });
    const b = await post(s, { model: 'gpt-5.6', messages: msgs, prompt_cache_options: { mode: 'explicit' } });
    expect(details(b.json).cached_tokens).toBe(0);
    const marked = [{ role: 'system', content: [{ type: 'text', text: stable, prompt_cache_breakpoint: MARK }] }, user('hello [[say hi]]')];
    const c = await post(s, { model: 'gpt-5.6', messages: marked, prompt_cache_options: { mode: 'explicit' } });
    expect(details(c.json).cache_write_tokens).toBeLessThan(c.json.usage.prompt_tokens - 2);
    expect(details(c.json).cache_write_tokens).toBeGreaterThan(9000);
  });

  it('writes one implicit and the latest three markers in implicit mode, the latest four in explicit mode', async () => {
    const s = await start();
    const marked = (content: string) => [{ type: 'text', text: content, prompt_cache_breakpoint: MARK }];
    /** A request with five markers (the system prompt's the oldest), then the probe, which shares its first `keep` messages. */
    const probe = async (t: string, mode: 'implicit' | 'explicit', keep: number) => {
      const sys = { role: 'system', content: marked(text(1500, `${t}-sys`)) };
      const users = [1, 2, 3, 4].map((n) => ({ role: 'user', content: marked(text(300, `${t}-u${n}`)) }));
      const a = await post(s, { model: 'gpt-5.6', messages: [sys, ...users, user(`${t} last [[say ok]]`)], prompt_cache_options: { mode } });
      expect(a.status).toBe(200);
      const b = await post(s, { model: 'gpt-5.6', messages: [sys, ...users.slice(0, keep - 1), user(`${t} other [[say ok]]`)], prompt_cache_options: { mode } });
      return details(b.json).cached_tokens;
    };
    // The system prompt's marker, fifth latest, is written in neither mode.
    expect(await probe('sys-implicit', 'implicit', 1)).toBe(0);
    expect(await probe('sys-explicit', 'explicit', 1)).toBe(0);
    // The first user message's, fourth latest, only in explicit mode.
    expect(await probe('u1-implicit', 'implicit', 2)).toBe(0);
    expect(await probe('u1-explicit', 'explicit', 2)).toBeGreaterThan(1800);
    // The second's, third latest, in both.
    expect(await probe('u2-implicit', 'implicit', 3)).toBeGreaterThan(2100);
  });

  it('older modes answer 400 to the fields; GPT-5.6 to prompt_cache_retention and to a marker on an assistant message', async () => {
    const s = await start();
    const msgs = [{ role: 'system', content: [{ type: 'text', text: 'sys', prompt_cache_breakpoint: MARK }] }, user('hi')];
    const old = `${s.url.replace(/\/v1$/, '')}/openai/v1`;
    const a = await post(s, { model: 'gpt-5.4', messages: msgs }, { base: old });
    expect(a.status).toBe(400);
    expect(a.json.error.param).toBe('messages.[0].content.[0].prompt_cache_breakpoint');
    const b = await post(s, { model: 'gpt-5.4', messages: [user('hi')], prompt_cache_options: { mode: 'implicit' } }, { base: old });
    expect(b.status).toBe(400);
    expect(b.json.error.message).toContain('prompt_cache_options');
    const c = await post(s, { model: 'gpt-5.6', messages: [user('hi')], prompt_cache_retention: '24h' });
    expect(c.status).toBe(400);
    const d = await post(s, { model: 'gpt-5.6', messages: [user('hi'), { role: 'assistant', content: [{ type: 'text', text: 'x', prompt_cache_breakpoint: MARK }] }, user('again')] });
    expect(d.status).toBe(400);
    const e = await responses(s, old, { model: 'gpt-5.4', store: false, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi', prompt_cache_breakpoint: MARK }] }] });
    expect(e.status).toBe(400);
    expect(e.json.error.param).toBe('input.[0].content.[0].prompt_cache_breakpoint');
  });

  it('the Responses wire: a marked developer item is read back, writes are reported', async () => {
    const s = await start();
    const body = (q: string) => ({
      model: 'gpt-5.6', store: false,
      input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: stable, prompt_cache_breakpoint: MARK }] }, { role: 'user', content: `${q} [[say ok]]` }],
    });
    const a = await responses(s, s.url, body('first'));
    expect(a.status).toBe(200);
    expect(a.json.usage.input_tokens_details.cache_write_tokens).toBe(a.json.usage.input_tokens - END_TOKENS);
    const b = await responses(s, s.url, body('second, other'));
    expect(b.json.usage.input_tokens_details.cached_tokens).toBe(Math.ceil((Buffer.byteLength('<|start|>developer\n') + stable.length) / 4));
  });
});
