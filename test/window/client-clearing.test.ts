/**
 * window-v4 (docs/decisions/0005-client-clearing.md): tool results the client cleared itself are
 * elisions it already made. The window keeps sending the log's copies (the upstream's cached
 * bytes) until its own next trim, which elides them all first; and a fold's stand-in leaves with
 * its successor, so none names an entry the request no longer shows.
 */
import { describe, expect, it } from 'vitest';
import type { Recipe, WindowVersion } from '../../src/core/events.js';
import type { ToolCall } from '../../src/core/types.js';
import { buildAt, firstDifference } from '../../src/window/index.js';
import { contents, LogBuilder } from './log-builder.js';

const MARKER = '[Old tool result content cleared]';
const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({ id, name, arguments: JSON.stringify(args) });
const file = (tag: string, bytes = 300) => `${tag} `.repeat(bytes / (tag.length + 1));

/** Six reads of about 200 tokens each and a reply: about 1,300 tokens, under high water. */
function reads(version: WindowVersion, recipe: Partial<Recipe> = {}): { log: LogBuilder; results: number[] } {
  const log = new LogBuilder({ version, high_water: 1400, low_water: 1150, protected_entries: 2, max_result_tokens: 10_000, ...recipe });
  log.user('read the parser');
  const results: number[] = [];
  for (let i = 0; i < 6; i++) {
    log.reply({ calls: [call(`c${i}`, 'Read', { file_path: `src/f${i}.ts` })] });
    results.push(log.tool(`c${i}`, file(`f${i}`, 600)));
  }
  log.reply({ content: 'read them all' });
  return { log, results };
}

const prefixOf = (a: readonly unknown[], b: readonly unknown[]) => JSON.stringify(b).startsWith(JSON.stringify(a).slice(0, -1));

describe('client-side clearing (window-v4)', () => {
  it('keeps sending the log\'s copies until its own trim, which elides the cleared results first: one break, where the first cleared one stood', () => {
    const { log, results } = reads('window-v4');
    const before = log.send();
    expect(before.trimmed).toBe(false);
    // The client clears the third and fourth results (qwen-code keeps the newest, clears older ones;
    // Claude Code clears by tool): the first new message carries which.
    log.add({ type: 'client.msg', msg: { role: 'user', content: 'now the lexer' }, cleared: [{ text: MARKER, seqs: [results[2]!, results[3]!] }] });
    const same = log.send();
    expect(same.trimmed).toBe(false);
    expect(prefixOf(before.request.messages, same.request.messages)).toBe(true);
    expect(contents(same)).toContain(file('f2', 600));

    // The conversation grows past high water: the trim elides the two cleared results first, and
    // that is enough to reach low water, so the older ones stay and the prefix holds up to the first.
    log.reply({ calls: [call('n', 'Read', { file_path: 'src/lexer.ts' })] });
    log.tool('n', file('lexer', 600));
    const trim = log.send();
    expect(trim.trimmed).toBe(true);
    expect(trim.elided).toEqual([results[2], results[3]]);
    expect(contents(trim)).toContain(file('f0', 600));
    expect(contents(trim)).toContain(`[elided seq=${results[2]}]`);
    const at = same.request.messages.findIndex((m) => m.role === 'tool' && m.content === file('f2', 600));
    expect(trim.request.messages.slice(0, at)).toEqual(same.request.messages.slice(0, at));
    for (const r of [before, same, trim]) expect(buildAt(log.events, r.seq).digest).toBe(r.digest);
  });

  it('under window-v3 the field changes nothing: the trim goes oldest first, as logs written before replay', () => {
    const { log, results } = reads('window-v3');
    log.send();
    log.add({ type: 'client.msg', msg: { role: 'user', content: 'now the lexer' }, cleared: [{ text: MARKER, seqs: [results[2]!, results[3]!] }] });
    log.send();
    log.reply({ calls: [call('n', 'Read', { file_path: 'src/lexer.ts' })] });
    log.tool('n', file('lexer', 600));
    const trim = log.send();
    expect(trim.elided).toEqual([results[0], results[1]]);
    expect(buildAt(log.events, trim.seq).digest).toBe(trim.digest);
  });

  it('elides every cleared result at the trim, beyond low water, then goes on oldest first if it must', () => {
    const { log, results } = reads('window-v4', { low_water: 800 });
    log.add({ type: 'client.msg', msg: { role: 'user', content: 'now the lexer' }, cleared: [{ text: MARKER, seqs: [results[4]!] }] });
    log.reply({ calls: [call('n', 'Read', { file_path: 'src/lexer.ts' })] });
    log.tool('n', file('lexer', 600));
    const trim = log.send();
    expect(trim.elided).toEqual([results[0], results[1], results[2], results[4]]);
    expect(buildAt(log.events, trim.seq).digest).toBe(trim.digest);
  });
});

describe('a fold\'s stand-in can name a successor that a later trim elides', () => {
  /** A read folded by the one after it at a first trim; then more reads, and a second trim. */
  function twoTrims(version: WindowVersion) {
    const log = new LogBuilder({ version, high_water: 600, low_water: 400, protected_entries: 2, max_result_tokens: 10_000 });
    log.user('fix the parser');
    log.reply({ calls: [call('f', 'Grep', { pattern: 'parse', path: 'src' })] });
    const filler = log.tool('f', file('match', 1800));
    log.reply({ calls: [call('a', 'Read', { file_path: 'src/a.ts' })] });
    const first = log.tool('a', file('alpha'));
    log.reply({ calls: [call('b', 'Read', { file_path: 'src/a.ts' })] });
    const second = log.tool('b', file('alpha2'));
    log.reply({ content: 'done' });
    log.user('thanks; now the lexer');
    const r1 = log.send();
    expect(r1.elided).toEqual([filler]);
    expect(r1.folded).toEqual([{ seq: first, by: second }]);
    log.reply({ calls: [call('c', 'Read', { file_path: 'src/lex.ts' })] });
    log.tool('c', file('lex', 1500));
    log.reply({ content: 'read it' });
    log.user('go on');
    const r2 = log.send();
    expect(r2.trimmed).toBe(true);
    return { log, first, second, r1, r2 };
  }

  it('under window-v4 the stand-in leaves with its successor', () => {
    const { log, first, second, r1, r2 } = twoTrims('window-v4');
    expect(r2.elided).toEqual(expect.arrayContaining([first, second]));
    // The break is the trim's, where the stand-in stood (proxy diff and the break counters).
    expect(firstDifference(r1.request, r2.request, log.events.filter((e) => e.seq > r1.seq && e.seq < r2.seq))).toMatchObject({ cause: 'trim' });
    const texts = contents(r2);
    expect(texts).toContain(`[elided seq=${first}]`);
    expect(texts.filter((t) => t?.includes(`seq=${second}]`) === true && t.startsWith('[folded'))).toEqual([]);
    expect(buildAt(log.events, r2.seq).digest).toBe(r2.digest);
  });

  it('under window-v3 it still names the elided successor (logs written before replay as they did)', () => {
    const { log, first, second, r2 } = twoTrims('window-v3');
    expect(r2.elided).toContain(second);
    expect(r2.elided).not.toContain(first);
    expect(contents(r2)).toContain(`[folded seq=${first}: Read src/a.ts; newer result at seq=${second}]`);
    expect(buildAt(log.events, r2.seq).digest).toBe(r2.digest);
  });
});
