import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { contents, LogBuilder } from './log-builder.js';

const calls = (m: NeutralMessage | undefined) => (m?.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : undefined);
const toolIds = (ms: NeutralMessage[]) => ms.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));

describe('tool-call pairs', () => {
  it('keeps parallel calls with their results, in the order the results were logged', () => {
    const log = new LogBuilder();
    log.user('u');
    log.reply({ calls: ['a', 'b', 'c'], content: null });
    log.tool('c', 'rc');
    log.tool('a', 'ra');
    log.tool('b', 'rb');
    const msgs = log.send().request.messages;
    expect(calls(msgs[1])).toEqual(['a', 'b', 'c']);
    expect(msgs[1]!.content).toBeNull();
    expect(toolIds(msgs)).toEqual(['c', 'a', 'b']);
  });

  it('drops the calls a client moved on from without answering (and their blocks)', () => {
    const log = new LogBuilder();
    log.user('u');
    log.reply({ calls: ['a', 'b'], content: null, blocks: true });
    log.tool('a', 'ra');
    log.user('never mind');
    log.reply({ calls: ['c'], content: null, thinking: 't' });
    log.user('stop');
    const msgs = log.send().request.messages;
    expect(calls(msgs[1])).toEqual(['a']);
    expect(msgs[1]).not.toHaveProperty('blocks');
    expect(msgs[1]!).toHaveProperty('thinking');
    // Every call dropped and no text: sent with empty text, which providers accept.
    expect(msgs[4]).toEqual({ role: 'assistant', content: '', thinking: 't' });
  });

  it('leaves out a result with no batch right before it', () => {
    const log = new LogBuilder();
    log.user('u');
    log.tool('x', 'orphan at the start');
    log.reply({ calls: ['a'] });
    log.tool('a', 'ra');
    log.user('next');
    log.tool('a', 'late result for a, after a user message');
    log.reply({ content: 'done' });
    log.tool('a', 'after a reply without calls');
    const r = log.send();
    expect(toolIds(r.request.messages)).toEqual(['a']);
    expect(contents(r)).toEqual(['u', r.request.messages[1]!.content, 'ra', 'next', 'done']);
  });

  it('links a reused call id to its latest batch', () => {
    const log = new LogBuilder();
    log.user('u');
    log.reply({ calls: ['call_0', 'call_1'] });
    log.tool('call_0', 'first batch 0');
    log.tool('call_1', 'first batch 1');
    log.user('again');
    log.reply({ calls: ['call_0'] });
    log.tool('call_0', 'second batch 0');
    log.tool('call_0', 'duplicate answer');
    const msgs = log.send().request.messages;
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user', 'assistant', 'tool']);
    expect(msgs[6]!.content).toBe('second batch 0');
    expect(calls(msgs[5])).toEqual(['call_0']);
  });

  it('eliding a batch omits exactly its own results, even with reused ids', () => {
    const log = new LogBuilder({ high_water: 120, low_water: 20, protected_entries: 3, max_result_tokens: 10_000 });
    log.user('u');
    const a1 = log.reply({ calls: ['call_0'], content: 'x'.repeat(300) });
    const t1 = log.tool('call_0', 'r1');
    log.user('again');
    log.reply({ calls: ['call_0'] });
    log.tool('call_0', 'r2');
    const r = log.send();
    expect(r.elided).toEqual([a1, t1]);
    expect(contents(r)).toEqual(['u', `[elided seq=${a1}]`, 'again', r.request.messages[3]!.content, 'r2']);
    expect(calls(r.request.messages[1])).toEqual([]);
  });

  it('shows a batch answered over several requests with the calls answered so far', () => {
    const log = new LogBuilder();
    log.user('u');
    log.reply({ calls: ['a', 'b'] });
    log.tool('a', 'ra');
    const partial = log.send();
    expect(calls(partial.request.messages[1])).toEqual(['a']);
    log.tool('b', 'rb');
    const whole = log.send();
    expect(calls(whole.request.messages[1])).toEqual(['a', 'b']);
    expect(toolIds(whole.request.messages)).toEqual(['a', 'b']);
  });
});
