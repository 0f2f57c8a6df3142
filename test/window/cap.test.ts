import { describe, expect, it } from 'vitest';
import { estimateTextTokens, utf8Length } from '../../src/core/estimate.js';
import { capToolResult, omittedLinesMarker } from '../../src/window/index.js';
import { LogBuilder, lines } from './log-builder.js';

describe('tool result caps', () => {
  it('leaves a result within the cap alone', () => {
    const text = lines(10);
    expect(estimateTextTokens(text)).toBeLessThanOrEqual(100);
    expect(capToolResult(text, 100)).toBe(text);
  });

  it('keeps head and tail lines, about half the cap each, and names the lines left out', () => {
    // 100 lines of 20 chars (21 bytes with the newline); cap 70 tokens -> 105 bytes a side -> 5 lines.
    const text = lines(100);
    const out = capToolResult(text, 70);
    const kept = out.split('\n');
    expect(kept).toHaveLength(11);
    expect(kept.slice(0, 5)).toEqual(text.split('\n').slice(0, 5));
    expect(kept[5]).toBe('[lines 6-95 of 100 omitted]');
    expect(kept[5]).toBe(omittedLinesMarker(6, 95, 100));
    expect(kept.slice(6)).toEqual(text.split('\n').slice(95));
    expect(capToolResult(text, 70)).toBe(out);
  });

  it('counts a final newline as the end of the last line, and keeps it', () => {
    const out = capToolResult(lines(100) + '\n', 70);
    expect(out).toContain('[lines 6-95 of 100 omitted]');
    expect(out.endsWith('line 100 xxxxxxxxxxx\n')).toBe(true);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const wide = Array.from({ length: 50 }, (_, i) => `${i + 1} ` + 'é'.repeat(20)).join('\n');
    const out = capToolResult(wide, 40);
    const [head] = out.split('\n[lines');
    expect(utf8Length(head! + '\n')).toBeLessThanOrEqual(60);
    expect(out).toMatch(/\[lines \d+-\d+ of 50 omitted\]/);
  });

  it('cuts a result with no line end at character boundaries', () => {
    const text = '🙂'.repeat(400); // 1600 bytes, no newline
    const out = capToolResult(text, 100);
    const match = /^(.*)\n\[about (\d+) tokens omitted\]\n(.*)$/su.exec(out);
    expect(match).not.toBeNull();
    const [, head, omitted, tail] = match!;
    // Whole emoji only: no lone surrogate on either side.
    expect(head).toBe('🙂'.repeat(37));
    expect(tail).toBe('🙂'.repeat(37));
    expect(Number(omitted)).toBe(estimateTextTokens('🙂'.repeat(400 - 74)));
  });

  it('cuts at characters when every line is longer than half the cap', () => {
    const text = 'a'.repeat(500) + '\n' + 'b'.repeat(500);
    const out = capToolResult(text, 50);
    expect(out).toBe(`${'a'.repeat(75)}\n[about ${estimateTextTokens('a'.repeat(425) + '\n' + 'b'.repeat(425))} tokens omitted]\n${'b'.repeat(75)}`);
  });

  it('caps tool results in the request, and nothing else', () => {
    const log = new LogBuilder({ max_result_tokens: 70 });
    log.user(lines(100));
    log.reply({ calls: ['c1'] });
    log.tool('c1', lines(100));
    const msgs = log.send().request.messages;
    expect(msgs[0]!.content).toBe(lines(100));
    expect(msgs[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: capToolResult(lines(100), 70) });
  });
});
