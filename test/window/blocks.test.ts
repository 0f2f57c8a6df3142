import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { NeutralMessage } from '../../src/core/types.js';
import { ORIGIN_A, ORIGIN_B } from './gen-session.js';
import { LogBuilder, TOOL } from './log-builder.js';

const withBlocks = (ms: NeutralMessage[]) => ms.flatMap((m, i) => (m.role === 'assistant' && m.blocks !== undefined ? [i] : []));
const thinking = (ms: NeutralMessage[]) => ms.flatMap((m, i) => (m.role === 'assistant' && m.thinking !== undefined ? [i] : []));

/** Three replies with blocks (messages 1, 3 and 5) around a tool result a later trim elides; its seq. */
function repliesAroundABigResult(log: LogBuilder): number {
  log.user('u1');
  log.reply({ calls: ['c1'], blocks: true });
  const t1 = log.tool('c1', 'x'.repeat(750));
  log.reply({ blocks: true, content: 'after the big result' });
  log.user('u2');
  log.reply({ blocks: true });
  return t1;
}

describe('thinking and opaque blocks', () => {
  it('gives thinking back always, and blocks only to the origin that made them', () => {
    const log = new LogBuilder();
    log.user('u1');
    log.reply({ blocks: true, origin: ORIGIN_A });
    log.user('u2');
    log.reply({ blocks: true, origin: ORIGIN_B });
    log.user('u3');
    const toA = log.peek(ORIGIN_A).request.messages;
    const toB = log.peek(ORIGIN_B).request.messages;
    expect(withBlocks(toA)).toEqual([1]);
    expect(withBlocks(toB)).toEqual([3]);
    expect(thinking(toA)).toEqual([1, 3]);
    expect(thinking(toB)).toEqual([1, 3]);
    // Same origin provider, other model: none.
    expect(withBlocks(log.peek({ provider: ORIGIN_A.provider, model: 'other' }).request.messages)).toEqual([]);
  });

  it('switching model and back sends the blocks again where they were', () => {
    const log = new LogBuilder();
    log.user('u1');
    log.reply({ blocks: true });
    log.user('u2');
    const a1 = log.send(ORIGIN_A);
    log.reply({ content: 'from b', origin: ORIGIN_B });
    log.user('u3');
    const b = log.send(ORIGIN_B);
    expect(withBlocks(b.request.messages)).toEqual([]);
    expect(b.request.model).toBe(ORIGIN_B.model);
    log.reply({ content: 'back on a' });
    log.user('u4');
    const a2 = log.send(ORIGIN_A);
    expect(withBlocks(a2.request.messages)).toEqual([1]);
    expect(canonicalJson(a2.request.messages).startsWith(canonicalJson(a1.request.messages).slice(0, -1))).toBe(true);
  });

  it('drops the blocks of replies made before a later elision of an earlier entry, keeps their thinking', () => {
    const log = new LogBuilder({ high_water: 400, low_water: 350, protected_entries: 4, max_result_tokens: 10_000 });
    const t1 = repliesAroundABigResult(log);
    expect(withBlocks(log.send().request.messages)).toEqual([1, 3, 5]);
    log.user('y'.repeat(600));
    // The elision is decided by this very request: it already leaves the stale blocks out.
    const trimmed = log.send();
    expect(trimmed.elided).toEqual([t1]);
    expect(withBlocks(trimmed.request.messages)).toEqual([1]);
    expect(thinking(trimmed.request.messages)).toEqual([1, 3, 5]);
    // A reply made after the elision keeps its blocks; the stale ones stay out.
    log.reply({ blocks: true });
    log.user('u4');
    const next = log.send();
    expect(next.trimmed).toBe(false);
    expect(withBlocks(next.request.messages)).toEqual([1, 7]);
  });

  it('with stale_blocks = keep, sends every reply its blocks through an elision (the upstream drops those it finds invalid)', () => {
    const log = new LogBuilder({ high_water: 400, low_water: 350, protected_entries: 4, max_result_tokens: 10_000, stale_blocks: 'keep' });
    const t1 = repliesAroundABigResult(log);
    log.user('y'.repeat(600));
    const trimmed = log.send();
    expect(trimmed.elided).toEqual([t1]);
    expect(withBlocks(trimmed.request.messages)).toEqual([1, 3, 5]);
    log.reply({ blocks: true });
    log.user('u4');
    const next = log.send();
    expect(next.trimmed).toBe(false);
    expect(withBlocks(next.request.messages)).toEqual([1, 3, 5, 7]);
    // The same log under the default recipe leaves the stale ones out (the test above).
  });

  it('keeps the blocks a provider does not bind to the prefix (unbound) through a later elision', () => {
    const log = new LogBuilder({ high_water: 400, low_water: 350, protected_entries: 4, max_result_tokens: 10_000 });
    const sig = (n: string) => [{ kind: 'gemini.thought_signature' as const, origin: ORIGIN_A, data: n, before_call: 0, unbound: true as const }];
    log.user('u1');
    log.reply({ calls: ['c1'], blocks: sig('s1') });
    const t1 = log.tool('c1', 'x'.repeat(750));
    log.reply({ blocks: sig('s2'), content: 'after the big result' });
    log.user('u2');
    log.reply({ blocks: true });
    expect(withBlocks(log.send().request.messages)).toEqual([1, 3, 5]);
    log.user('y'.repeat(600));
    const trimmed = log.send();
    expect(trimmed.elided).toEqual([t1]);
    // The signatures stay; the prefix-bound thinking block of the later reply goes.
    expect(withBlocks(trimmed.request.messages)).toEqual([1, 3]);
    expect(withBlocks(log.send(ORIGIN_B).request.messages)).toEqual([]);
  });

  it('a summary makes later-surviving replies made before it stale, and so does its revocation', () => {
    const log = new LogBuilder();
    const u1 = log.user('u1');
    const r1 = log.reply({ content: 'r1' });
    log.user('u2');
    log.reply({ blocks: true });
    log.user('u3');
    log.reply({ blocks: true });
    log.user('u4');
    expect(withBlocks(log.peek().request.messages)).toEqual([3, 5]);
    const s = log.add({ type: 'summary.add', from: u1, to: r1, text: 'S', source_digest: 'd' }).seq;
    expect(withBlocks(log.peek().request.messages)).toEqual([]);
    log.reply({ blocks: true });
    log.user('u5');
    // [S, u2, r, u3, r, u4, new reply, u5]: only the reply made after the summary.
    expect(withBlocks(log.peek().request.messages)).toEqual([6]);
    log.add({ type: 'summary.revoke', summary: s });
    expect(withBlocks(log.peek().request.messages)).toEqual([]);
  });

  it('a changed system prompt under follow, or a changed catalog, makes every earlier reply stale', () => {
    for (const change of ['system', 'catalog'] as const) {
      const log = new LogBuilder({ system: 'follow' }, { system: 'v1', tools: [TOOL] });
      log.user('u1');
      log.reply({ blocks: true });
      log.user('u2');
      expect(withBlocks(log.peek().request.messages)).toEqual([2]);
      if (change === 'system') log.system('v2');
      else log.add({ type: 'catalog', tools: [TOOL, { type: 'function', function: { name: 'more' } }] });
      expect(withBlocks(log.peek().request.messages)).toEqual([]);
    }
    const append = new LogBuilder({ system: 'append' }, { system: 'v1' });
    append.user('u1');
    append.reply({ blocks: true });
    append.system('v2');
    expect(withBlocks(append.peek().request.messages)).toEqual([2]);
  });

  it('shows neither aborted replies nor errors', () => {
    const log = new LogBuilder();
    log.user('u1');
    const first = log.send();
    log.reply({ content: 'half a repl', aborted: true });
    log.add({ type: 'llm.error', req: first.seq, status: 500, body: 'boom' });
    const again = log.send();
    expect(again.request.messages).toEqual(first.request.messages);
    expect(again.digest).toBe(first.digest);
  });
});
