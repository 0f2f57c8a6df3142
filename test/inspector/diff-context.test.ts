import { describe, expect, it } from 'vitest';
import type { NeutralMessage, NeutralRequest } from '../../src/core/types.js';
import { diffInContext } from '../../src/inspector/diff-context.js';
import { firstDifference } from '../../src/window/index.js';

function request(messages: NeutralMessage[]): NeutralRequest {
  return { model: 'm', params: {}, tools: [], messages };
}

const user: NeutralMessage = { role: 'user', content: 'Read the config.' };
const calls: NeutralMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] };

describe('the first difference in context', () => {
  it('an assistant message that held only tool calls has no text: null, not the JSON word', () => {
    const prev = request([user, calls, { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(50) }]);
    const next = request([user, { role: 'assistant', content: '[elided seq=6-9]' }]);
    const d = firstDifference(prev, next)!;
    expect(d.field).toBe('messages[1].content');
    const view = diffInContext(prev, next, d);
    expect(view.before).toBeNull();
    expect(view.after).toBe('[elided seq=6-9]');
    expect(view.context.line).toBe(1);
  });

  it('two texts: both sides as text, and where they first part', () => {
    const prev = request([user, { role: 'assistant', content: 'one\ntwo\nthree' }]);
    const next = request([user, { role: 'assistant', content: 'one\ntwo\nfour' }]);
    const view = diffInContext(prev, next, firstDifference(prev, next)!);
    expect(view.before).toBe('one\ntwo\nthree');
    expect(view.after).toBe('one\ntwo\nfour');
    expect(view.context.at).toBe('one\ntwo\n'.length);
    expect(view.context.line).toBe(3);
  });

  it('a message the next request dropped: its side is null', () => {
    const prev = request([user, { role: 'assistant', content: 'done' }]);
    const next = request([user]);
    const view = diffInContext(prev, next, firstDifference(prev, next)!);
    expect(view.path).toBe('messages');
    expect(JSON.parse(view.before!)).toEqual({ role: 'assistant', content: 'done' });
    expect(view.after).toBeNull();
  });
});
