/**
 * Per-tool caps (window-v3): what a call is (tool-calls.ts), the cap of its result (tool-caps.ts),
 * and a recipe whose caps change re-rendering what they cut (docs/decisions.md, Folds and per-tool caps).
 */
import { describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/core/events.js';
import type { ToolCall } from '../../src/core/types.js';
import { buildAt } from '../../src/window/index.js';
import { looksFailed, shapeOf } from '../../src/window/tool-calls.js';
import { ResultCaps } from '../../src/window/tool-caps.js';
import { smallRecipe } from './gen-session.js';
import { contents, LogBuilder, lines } from './log-builder.js';

const call = (name: string, args: unknown): ToolCall => ({ id: 'c', name, arguments: JSON.stringify(args) });

describe('the shape of a call', () => {
  it('recognises whole-file reads as the agents send them, and ranged ones', () => {
    const cases: [ToolCall, string | undefined, boolean][] = [
      [call('Read', { file_path: '/repo/src/a.ts' }), '/repo/src/a.ts', true], // Claude Code
      [call('Read', { file_path: '/repo/src/a.ts', offset: 100, limit: 50 }), '/repo/src/a.ts', false],
      [call('read', { filePath: 'src/a.ts' }), 'src/a.ts', true], // opencode
      [call('read', { filePath: 'src/a.ts', offset: 0, limit: 2000 }), 'src/a.ts', false],
      [call('read_file', { path: 'src/a.ts' }), 'src/a.ts', true], // Cline, Roo
      [call('shell', { command: ['bash', '-lc', 'cat src/a.ts'], workdir: '/repo' }), 'src/a.ts', true], // Codex
      [call('exec_command', { cmd: "cat 'src/a b.ts'" }), 'src/a b.ts', true],
      [call('shell', { command: ['bash', '-lc', "sed -n '1,200p' src/a.ts"] }), undefined, false],
      [call('Bash', { command: 'cat src/a.ts | head -50' }), undefined, false],
      [call('Edit', { file_path: 'src/a.ts', old_string: 'a', new_string: 'b' }), 'src/a.ts', false],
      [call('Write', { file_path: 'src/a.ts', content: 'x' }), 'src/a.ts', false],
      [{ id: 'c', name: 'Read', arguments: '{not json' }, undefined, false],
    ];
    for (const [c, target, whole] of cases) {
      const shape = shapeOf(c);
      expect({ name: c.name, target: shape.target, whole: shape.wholeRead }).toEqual({ name: c.name, target, whole });
    }
  });

  it('is the same call whatever the order and spacing of its arguments; labels are one short line', () => {
    const a = shapeOf({ id: '1', name: 'Grep', arguments: '{"pattern":"x","path":"src"}' });
    const b = shapeOf({ id: '2', name: 'Grep', arguments: '{ "path": "src", "pattern": "x" }' });
    expect(a.identity).toBe(b.identity);
    expect(a.identity).not.toBe(shapeOf({ id: '3', name: 'Glob', arguments: '{"pattern":"x","path":"src"}' }).identity);
    expect(shapeOf(call('Bash', { command: `echo ${'x'.repeat(200)}\nls` })).label).toMatch(/^Bash echo x+\.\.\.$/);
    expect(shapeOf(call('Bash', { command: 'npm test' })).label).toBe('Bash npm test');
  });

  it('reads a failure from the first lines of a result', () => {
    for (const failed of ['<tool_use_error>File does not exist.</tool_use_error>', 'Error: ENOENT: no such file', 'error: pathspec', 'Exit code 1\nFAIL', 'Exit code: 2\nWall time: 0.1 seconds\nOutput:\n', 'Chunk ID: 1\nProcess exited with code 127\n']) {
      expect(looksFailed(failed), failed).toBe(true);
    }
    for (const ok of ['Tests 12 passed', 'Exit code: 0\nOutput:\n', '     1\tconst error = 1;', 'Process exited with code 0', 'no errors found', 'The error was fixed']) {
      expect(looksFailed(ok), ok).toBe(false);
    }
  });
});

describe('result caps by tool', () => {
  const recipe = (over: Partial<Recipe> = {}) => smallRecipe({ version: 'window-v3', max_result_tokens: 100, tool_caps: [{ tools: 'Bash|shell', max_result_tokens: 40 }, { tools: 'Read|read', max_result_tokens: 300 }, { tools: 'B.*', max_result_tokens: 7 }], ...over });
  const capOf = (caps: ResultCaps, c: ToolCall) => caps.capOf({ call: shapeOf(c) });

  it('takes the first pattern matching the whole name, doubles a whole-file read, and has max_result_tokens otherwise', () => {
    const caps = new ResultCaps(recipe());
    expect(capOf(caps, call('Bash', { command: 'npm test' }))).toBe(40);
    expect(capOf(caps, call('BashOutput', {}))).toBe(7);
    expect(capOf(caps, call('Read', { file_path: 'a', offset: 1, limit: 5 }))).toBe(300);
    expect(capOf(caps, call('Read', { file_path: 'a' }))).toBe(600);
    expect(capOf(caps, call('shell', { command: ['bash', '-lc', 'cat a'] }))).toBe(80);
    expect(capOf(caps, call('Grep', { pattern: 'x' }))).toBe(100);
    expect(capOf(caps, call('read_file', { path: 'a' }))).toBe(200);
    expect(caps.capOf({ call: undefined })).toBe(100);
  });

  it('before window-v3 every result has max_result_tokens', () => {
    const caps = new ResultCaps(recipe({ version: 'window-v2' }));
    expect(capOf(caps, call('Read', { file_path: 'a' }))).toBe(100);
    expect(capOf(caps, call('Bash', { command: 'x' }))).toBe(100);
  });

  it('cuts each result at its tool\'s cap in the request; a resume with other caps re-renders them, and every request replays', () => {
    const log = new LogBuilder(recipe());
    log.user('u1');
    log.reply({ calls: [call('Read', { file_path: 'a.ts' })].map((c) => ({ ...c, id: 'r' })) });
    log.tool('r', lines(120));
    log.reply({ calls: [{ ...call('Bash', { command: 'npm test' }), id: 'b' }] });
    log.tool('b', lines(120));
    log.reply({ calls: [{ ...call('Read', { file_path: 'a.ts', offset: 1, limit: 120 }), id: 'p' }] });
    log.tool('p', lines(120));
    log.user('u2');
    const first = log.send();
    const [read, bash, ranged] = contents(first).slice(2, 7).filter((_, i) => i % 2 === 0);
    // 120 lines of 20 bytes is about 800 tokens: the whole read keeps 600 tokens' worth, the ranged one 300, the shell 40.
    expect(read).toMatch(/\[lines \d+-\d+ of 120 omitted\]/);
    expect(read!.length).toBeGreaterThan(ranged!.length);
    expect(ranged!.length).toBeGreaterThan(bash!.length * 5);

    log.add({ type: 'session.resume', recipe: recipe({ tool_caps: [{ tools: 'Bash', max_result_tokens: 5000 }] }) });
    const second = log.send();
    expect(contents(second)[4]).toBe(lines(120));
    // Read has no entry now: max_result_tokens doubled, 200 tokens, cuts it shorter than 600 did.
    expect(contents(second)[2]).toMatch(/\[lines \d+-\d+ of 120 omitted\]/);
    expect(contents(second)[2]!.length).toBeLessThan(read!.length);
    for (const r of [first, second]) expect(buildAt(log.events, r.seq).digest).toBe(r.digest);
  });
});
