import { describe, expect, it } from 'vitest';
import { parseDirectives } from '../../src/sim/directives.js';
import { MODES } from '../../src/sim/modes.js';
import { planReply } from '../../src/sim/replies.js';
import type { WireMessage } from '../../src/sim/request.js';
import { countTokens } from '../../src/sim/tokens.js';

const digest = 'ab'.repeat(32);
const last = (content: string): WireMessage[] => [{ role: 'user', content }];

describe('parseDirectives', () => {
  it('reads each directive with its argument, in order', () => {
    expect(
      parseDirectives('go [[call read {"path":"a b"}]] [[say hello there]] [[think hmm]] [[len 5]] [[slow 20]] [[stream-error]] [[overflow]] [[error 429]]'),
    ).toEqual([
      { kind: 'call', name: 'read', args: '{"path":"a b"}' },
      { kind: 'say', text: 'hello there' },
      { kind: 'think', text: 'hmm' },
      { kind: 'len', tokens: 5 },
      { kind: 'slow', ms: 20 },
      { kind: 'stream-error' },
      { kind: 'overflow' },
      { kind: 'error', status: 429 },
    ]);
  });

  it('keeps JSON arguments that hold "]]" whole, and defaults arguments to {}', () => {
    expect(parseDirectives('[[call f {"a":[[1,2]]}]] [[call g]]')).toEqual([
      { kind: 'call', name: 'f', args: '{"a":[[1,2]]}' },
      { kind: 'call', name: 'g', args: '{}' },
    ]);
  });

  it('reads arguments quoted inside a JSON string through the quoting; keeps other arguments as written', () => {
    // A step file's directive as Cline's read_files result carries it: the file is a JSON string.
    const file = '1 | Next: [[call read_files {"files":[{"path":"/w/step2.txt"}]}]]';
    expect(parseDirectives(JSON.stringify([{ query: '/w/step1.txt', result: file }]))).toEqual([
      { kind: 'call', name: 'read_files', args: '{"files":[{"path":"/w/step2.txt"}]}' },
    ]);
    // Not JSON either way: as written, as a model that writes broken arguments would send them.
    expect(parseDirectives('[[call f {path:"a"}]] [[call g {\\"a\\":}]]')).toEqual([
      { kind: 'call', name: 'f', args: '{path:"a"}' },
      { kind: 'call', name: 'g', args: '{\\"a\\":}' },
    ]);
  });

  it('treats malformed or unknown directives as text', () => {
    expect(parseDirectives('[[len many]] [[error 200]] [[shout x]] [[call]] [[overflow now]] [[say unterminated')).toEqual([]);
  });
});

describe('planReply', () => {
  it('answers a plain message with a short deterministic text', () => {
    const a = planReply(last('hello'), digest, MODES.openai);
    expect(a.content).toMatch(/^OK\. .*abababababab/);
    expect(a.thinking).toBeNull();
    expect(a.finishReason).toBe('stop');
    expect(a.completionTokens).toBe(countTokens(a.content!));
    expect(planReply(last('hello'), digest, MODES.openai)).toEqual(a);
  });

  it('thinks in reasoning modes even when not asked, from the prompt digest', () => {
    const a = planReply(last('hello'), digest, MODES.deepseek);
    const b = planReply(last('hello'), 'cd'.repeat(32), MODES.deepseek);
    expect(a.thinking).not.toBeNull();
    expect(a.thinking).not.toBe(b.thinking);
    expect(a.reasoningTokens).toBe(countTokens(a.thinking!));
    expect(a.completionTokens).toBe(a.reasoningTokens + countTokens(a.content!));
  });

  it('makes parallel calls with deterministic, distinct ids and no content', () => {
    const plan = planReply(last('[[call a {"x":1}]] [[call b {"y":2}]]'), digest, MODES.openai);
    expect(plan.content).toBeNull();
    expect(plan.finishReason).toBe('tool_calls');
    expect(plan.toolCalls.map((c) => c.name)).toEqual(['a', 'b']);
    expect(plan.toolCalls[0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(plan.toolCalls[0]!.id).not.toBe(plan.toolCalls[1]!.id);
    expect(plan.toolCalls.map((c) => c.id)).toEqual(planReply(last('[[call a {"x":1}]] [[call b {"y":2}]]'), digest, MODES.openai).toolCalls.map((c) => c.id));
    expect(plan.completionTokens).toBe(countTokens('a') + countTokens('{"x":1}') + countTokens('b') + countTokens('{"y":2}'));
  });

  it('[[len N]] adds exactly N tokens after the said text', () => {
    const plan = planReply(last('[[say Hi!]] [[len 300]]'), digest, MODES.openai);
    expect(plan.content!.startsWith('Hi!')).toBe(true);
    expect(plan.completionTokens).toBe(countTokens('Hi!') + 300);
    expect(planReply(last('[[len 7]]'), digest, MODES.openai).completionTokens).toBe(7);
  });

  it('reads directives only from the last message, past trailing system messages, with the tool results before a user message', () => {
    const plan = planReply([{ role: 'user', content: '[[say early]]' }, { role: 'tool', tool_call_id: 'x', content: 'result' }], digest, MODES.openai);
    expect(plan.content).not.toBe('early');
    const turn = [{ role: 'tool', tool_call_id: 'x', content: '[[say from the result]]' }, { role: 'user', content: '<system-reminder>go on</system-reminder>' }];
    expect(planReply(turn, digest, MODES.openai).content).toBe('from the result');
    // Claude Code sends its environment as a system message after the user's: one turn.
    expect(planReply([{ role: 'user', content: '[[say turn]]' }, { role: 'system', content: 'env' }], digest, MODES.openai).content).toBe('turn');
    expect(planReply([{ role: 'user', content: [{ type: 'text', text: '[[say parts]]' }] }], digest, MODES.openai).content).toBe('parts');
  });

  it('carries failures, delays and stream errors', () => {
    expect(planReply(last('[[error 503]]'), digest, MODES.openai).failure).toEqual({ kind: 'error', status: 503 });
    expect(planReply(last('[[overflow]]'), digest, MODES.openai).failure).toEqual({ kind: 'overflow' });
    const plan = planReply(last('[[slow 15]] [[stream-error]]'), digest, MODES.openai);
    expect(plan.slowMs).toBe(15);
    expect(plan.streamError).toBe(true);
    expect(plan.failure).toBeNull();
  });
});
