import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { estimateMessageTokens, estimateTextTokens } from '../../src/core/estimate.js';
import { contents, LogBuilder, TOOL } from './log-builder.js';

const big = (n: number) => 'x'.repeat(n * 3); // n tokens

describe('sticky elision, hysteresis, protection', () => {
  it('elides tool results first, oldest first, down to low water, then assistants with their results', () => {
    const log = new LogBuilder({ high_water: 600, low_water: 150, max_result_tokens: 10_000, protected_entries: 4 });
    log.user('u1');
    const a1 = log.reply({ calls: ['c1'], content: big(100) });
    const t1 = log.tool('c1', big(200));
    const a2 = log.reply({ calls: ['c2'], content: big(100) });
    const t2 = log.tool('c2', big(200));
    log.user('u2');
    log.reply({ content: 'short' });
    log.user('u3');
    log.reply({ content: 'short' });
    const r = log.send();
    expect(r.estBeforeTrim).toBeGreaterThan(600);
    // Eliding both results (about 400 tokens) leaves about 225: one assistant batch more.
    expect(r.trimmed).toBe(true);
    expect(r.elided).toEqual([a1, t1, t2]);
    expect(r.estTokens).toBeLessThanOrEqual(150);
    expect(contents(r)).toEqual(['u1', `[elided seq=${a1}]`, big(100), `[elided seq=${t2}]`, 'u2', 'short', 'u3', 'short']);
    expect(r.request.messages[1]).toEqual({ role: 'assistant', content: `[elided seq=${a1}]` });
    expect(r.request.messages[3]).toEqual({ role: 'tool', tool_call_id: 'c2', content: `[elided seq=${t2}]` });
    expect(a2).toBe(a1 + 2);
  });

  it('stops as soon as the estimate is at or below low water', () => {
    const log = new LogBuilder({ high_water: 700, low_water: 500, max_result_tokens: 10_000, protected_entries: 1 });
    log.user('u1');
    log.reply({ calls: ['c1', 'c2', 'c3'] });
    const t1 = log.tool('c1', big(300));
    log.tool('c2', big(200));
    log.tool('c3', big(200));
    log.user('u2');
    const r = log.send();
    expect(r.estBeforeTrim).toBeGreaterThan(700);
    expect(r.elided).toEqual([t1]);
    expect(r.estTokens).toBeLessThanOrEqual(500);
    expect(contents(r).slice(2)).toEqual([`[elided seq=${t1}]`, big(200), big(200), 'u2']);
  });

  it('keeps every earlier elision (sticky), and elides nothing new below high water', () => {
    const log = new LogBuilder({ high_water: 600, low_water: 300, max_result_tokens: 10_000, protected_entries: 1 });
    log.user('u1');
    log.reply({ calls: ['c1'] });
    const t1 = log.tool('c1', big(700));
    log.user('u2');
    const first = log.send();
    expect(first.elided).toEqual([t1]);
    // Below high water now, and stays so: the same elision, nothing new, the prefix extends.
    log.reply({ content: big(50) });
    log.user('u3');
    const second = log.send();
    expect(second.trimmed).toBe(false);
    expect(second.elided).toEqual([]);
    expect(contents(second)[2]).toBe(`[elided seq=${t1}]`);
    expect(second.request.messages.slice(0, first.request.messages.length)).toEqual(first.request.messages);
    expect(canonicalJson(second.request.messages).startsWith(canonicalJson(first.request.messages).slice(0, -1))).toBe(true);
  });

  it('never elides the protected tail, and a protected result protects its batch', () => {
    const log = new LogBuilder({ high_water: 300, low_water: 10, max_result_tokens: 10_000, protected_entries: 3 });
    log.user('u1');
    const a = log.reply({ calls: ['c1', 'c2', 'c3'], content: big(100) });
    const t1 = log.tool('c1', big(100));
    const t2 = log.tool('c2', big(100));
    const t3 = log.tool('c3', big(100));
    const r = log.send();
    // Protected: t1..t3 (the last three); their batch too. Nothing else is eligible.
    expect(r.estBeforeTrim).toBeGreaterThan(300);
    expect(r.elided).toEqual([]);
    expect(r.trimmed).toBe(false);
    expect(contents(r)).toEqual(['u1', big(100), big(100), big(100), big(100)]);
    // One entry more: t1 leaves the protected tail and is elided in place; the batch stays.
    log.user('u2');
    const r2 = log.send();
    expect(r2.elided).toEqual([t1]);
    expect(contents(r2)[1]).toBe(big(100));
    expect([a, t2, t3]).toEqual([a, t1 + 1, t1 + 2]);
  });

  it('does not elide a batch still waiting for results', () => {
    const log = new LogBuilder({ high_water: 200, low_water: 10, max_result_tokens: 10_000, protected_entries: 0 });
    log.user('u1');
    const a = log.reply({ calls: ['c1', 'c2'], content: big(300) });
    const t1 = log.tool('c1', big(10));
    log.tool('zz', 'orphan');
    const r = log.peek();
    expect(r.elided).not.toContain(a);
    expect(r.request.messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'c1' }] });
    expect(r.elided).toEqual([t1]);
  });

  it('never elides user messages, and a request over high water with nothing eligible trims nothing', () => {
    const log = new LogBuilder({ high_water: 100, low_water: 50, protected_entries: 0 });
    log.user(big(200));
    log.reply({ content: big(30) });
    log.user(big(200));
    const r = log.send();
    expect(r.elided).toHaveLength(1);
    const r2 = log.send();
    expect(r2.estBeforeTrim).toBeGreaterThan(100);
    expect(r2.trimmed).toBe(false);
    expect(contents(r2)).toEqual([big(200), `[elided seq=${r.elided[0]}]`, big(200)]);
  });

  it('keeps an entry shorter than its placeholder: eliding it would grow the request', () => {
    const log = new LogBuilder({ high_water: 100, low_water: 50, protected_entries: 0 });
    log.user(big(200));
    log.reply({ content: 'ok' });
    log.user(big(200));
    const r = log.send();
    expect(r.estBeforeTrim).toBeGreaterThan(100);
    expect(r.elided).toEqual([]);
    expect(r.trimmed).toBe(false);
  });

  it('caps max_tokens at the output reserve and sets it when absent', () => {
    const log = new LogBuilder({ output_reserve: 512 });
    log.user('hi');
    expect(log.peek().request.params).toEqual({ max_tokens: 512 });
    log.params = { max_tokens: 100, temperature: 0 };
    expect(log.peek().request.params).toEqual({ max_tokens: 100, temperature: 0 });
    log.params = { max_tokens: 4096 };
    expect(log.peek().request.params.max_tokens).toBe(512);
  });

  it('estimates the request as sent: its messages plus the catalog', () => {
    const log = new LogBuilder({}, { system: 'sys', tools: [TOOL] });
    log.user('hello there');
    log.reply({ thinking: 'hmm', calls: ['c1'], blocks: true });
    log.tool('c1', 'result');
    const r = log.peek();
    const sum = r.request.messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
    expect(r.estTokens).toBe(sum + estimateTextTokens(canonicalJson([TOOL])));
    expect(r.request.messages[2]).toHaveProperty('blocks');
  });
});
