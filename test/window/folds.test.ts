/**
 * Folds (window-v3): a superseded tool result becomes a one-line stand-in, only on a request that
 * trims, only where that trim breaks the prefix anyway, and stays so (docs/decisions.md, Folds and
 * per-tool caps).
 */
import { describe, expect, it } from 'vitest';
import type { EventOf, Recipe } from '../../src/core/events.js';
import type { ToolCall } from '../../src/core/types.js';
import { buildAt } from '../../src/window/index.js';
import { contents, LogBuilder } from './log-builder.js';

const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({ id, name, arguments: JSON.stringify(args) });
const file = (tag: string, bytes = 300) => `${tag} `.repeat(bytes / (tag.length + 1));

interface Built {
  log: LogBuilder;
  filler: number;
  first: number;
  second: number;
}

/** A result the trim elides, then `first` and `second`, then a reply and a user message (the protected two). */
function session(recipe: Partial<Recipe>, a: [string, Record<string, unknown>, string], b: [string, Record<string, unknown>, string]): Built {
  const log = new LogBuilder({ version: 'window-v3', high_water: 600, low_water: 400, protected_entries: 2, max_result_tokens: 10_000, ...recipe });
  log.user('fix the parser');
  log.reply({ calls: [call('f', 'Grep', { pattern: 'parse', path: 'src' })] });
  const filler = log.tool('f', file('match', 1800));
  log.reply({ calls: [call('a', a[0], a[1])] });
  const first = log.tool('a', a[2]);
  log.reply({ calls: [call('b', b[0], b[1])] });
  const second = log.tool('b', b[2]);
  log.reply({ content: 'done' });
  log.user('thanks; now the lexer');
  return { log, filler, first, second };
}

const READ_A: [string, Record<string, unknown>, string] = ['Read', { file_path: 'src/a.ts' }, file('alpha')];

describe('folds', () => {
  it('fold a result read again, on the request that trims, after its first elision; later requests keep the stand-in', () => {
    const { log, filler, first, second } = session({}, READ_A, ['Read', { file_path: 'src/a.ts' }, file('alpha2')]);
    const r = log.send();
    expect(r.trimmed).toBe(true);
    expect(r.elided).toEqual([filler]);
    expect(r.folded).toEqual([{ seq: first, by: second }]);
    const standIn = `[folded seq=${first}: Read src/a.ts; newer result at seq=${second}]`;
    expect(contents(r)).toContain(standIn);
    expect(contents(r)).toContain(file('alpha2'));
    expect(r.estTokens).toBeLessThan(400);
    // The log holds the fold on the trimming request, with what superseded it.
    const req = log.events.find((e) => e.seq === r.seq) as EventOf<'llm.req'>;
    expect(req.folded).toEqual([{ seq: first, by: second }]);

    log.reply({ content: 'lexer next' });
    log.user('go on');
    const next = log.send();
    expect(next.trimmed).toBe(false);
    expect(next.folded).toEqual([]);
    expect(JSON.stringify(next.request.messages).startsWith(JSON.stringify(r.request.messages).slice(0, -1))).toBe(true);
    expect((log.events.find((e) => e.seq === next.seq) as EventOf<'llm.req'>).folded).toBeUndefined();
    for (const x of [r, next]) expect(buildAt(log.events, x.seq).digest).toBe(x.digest);
    expect(buildAt(log.events, r.seq).folded).toEqual(r.folded);
  });

  it('folds nothing on a request that does not trim', () => {
    const { log, first } = session({ high_water: 100_000, low_water: 50_000 }, READ_A, READ_A);
    const r = log.send();
    expect(r.trimmed).toBe(false);
    expect(r.folded).toEqual([]);
    expect(log.state.isElided(first)).toBe(false);
    expect(contents(r).filter((c) => c === READ_A[2])).toHaveLength(2);
  });

  it('folds nothing under window-v2, nor with folds = false in the recipe', () => {
    for (const recipe of [{ version: 'window-v2' as const }, { folds: false }]) {
      const { log, filler } = session(recipe, READ_A, READ_A);
      const r = log.send();
      expect(r.elided).toContain(filler);
      expect(r.folded).toEqual([]);
      expect(contents(r).some((c) => c?.startsWith('[folded') === true)).toBe(false);
    }
  });

  it('folds a failed run retried with success, a failed edit of a file edited next, and a ranged read followed by a whole read of the file', () => {
    const failing = `Exit code 1\n${'  FAIL test/parse.test.ts > reads a token\n'.repeat(8)}`;
    const retried = session({}, ['Bash', { command: 'npm test' }, failing], ['Bash', { command: 'npm test' }, 'Tests  12 passed (12)']);
    const r1 = retried.log.send();
    expect(r1.folded).toEqual([{ seq: retried.first, by: retried.second }]);
    expect(contents(r1)).toContain(`[folded seq=${retried.first}: failed Bash npm test; retried at seq=${retried.second}]`);

    const edit = session({}, ['Edit', { file_path: 'src/a.ts', old_string: 'x', new_string: 'y' }, '<tool_use_error>String to replace not found in file.</tool_use_error>'], ['Edit', { file_path: 'src/a.ts', old_string: 'z', new_string: 'y' }, 'The file src/a.ts has been updated.']);
    expect(edit.log.send().folded).toEqual([{ seq: edit.first, by: edit.second }]);

    const ranged = session({}, ['Read', { file_path: 'src/a.ts', offset: 10, limit: 40 }, file('part')], READ_A);
    expect(ranged.log.send().folded).toEqual([{ seq: ranged.first, by: ranged.second }]);
  });

  it('does not fold what is not superseded: a whole read before a ranged one, another file, a run that failed again, a small result', () => {
    const cases: [[string, Record<string, unknown>, string], [string, Record<string, unknown>, string]][] = [
      [READ_A, ['Read', { file_path: 'src/a.ts', offset: 10, limit: 40 }, file('part')]],
      [READ_A, ['Read', { file_path: 'src/b.ts' }, file('beta')]],
      [['Bash', { command: 'npm test' }, 'Tests 12 passed' + ' ok'.repeat(100)], ['Bash', { command: 'npm test' }, 'Exit code 1\nFAIL']],
      [['Edit', { file_path: 'src/a.ts', old_string: 'x', new_string: 'y' }, 'Error: no'], ['Edit', { file_path: 'src/a.ts', old_string: 'z', new_string: 'y' }, 'The file src/a.ts has been updated.']],
    ];
    for (const [a, b] of cases) {
      const { log, filler } = session({}, a, b);
      const r = log.send();
      expect(r.elided).toContain(filler);
      expect(r.folded).toEqual([]);
    }
  });

  it('does not fold a result whose newer copy the same trim elides, or one among the protected entries', () => {
    // Low water so low that the trim elides every result it may: the newer read goes too.
    const gone = session({ low_water: 10 }, READ_A, READ_A);
    const r = gone.log.send();
    expect(r.elided).toEqual(expect.arrayContaining([gone.filler, gone.first, gone.second]));
    expect(r.folded).toEqual([]);

    const kept = session({ protected_entries: 6 }, READ_A, READ_A);
    const k = kept.log.send();
    expect(k.elided).toEqual([kept.filler]);
    expect(k.folded).toEqual([]);
  });

  it('a rewrite that resends a folded result brings it back elided', () => {
    const { log, first } = session({}, READ_A, READ_A);
    log.send();
    expect(log.state.isElided(first)).toBe(true);
    log.add({ type: 'client.rewrite', from_seq: first - 1 });
    log.reply({ calls: [call('a', 'Read', { file_path: 'src/a.ts' })] });
    const again = log.add({ type: 'client.msg', msg: { role: 'tool', tool_call_id: 'a', content: READ_A[2] }, elided_as: first }).seq;
    const r = log.send();
    expect(contents(r)).toContain(`[elided seq=${again}]`);
    expect(buildAt(log.events, r.seq).digest).toBe(r.digest);
  });
});
