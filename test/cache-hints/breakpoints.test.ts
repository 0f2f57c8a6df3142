import { describe, expect, it } from 'vitest';
import { planBreakpoints } from '../../src/cache-hints/breakpoints.js';
import type { NeutralMessage, NeutralRequest, ToolSpec } from '../../src/core/types.js';

const tool: ToolSpec = { type: 'function', function: { name: 'read', parameters: { type: 'object' } } };
const req = (messages: NeutralMessage[], tools: ToolSpec[] = []): NeutralRequest => ({ messages, model: 'm', params: {}, tools });

const sys: NeutralMessage = { role: 'system', content: 'be brief' };
const user: NeutralMessage = { role: 'user', content: 'read a.ts' };
const call: NeutralMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read', arguments: '{}' }] };
const result: NeutralMessage = { role: 'tool', tool_call_id: 'c1', content: 'text' };

describe('planBreakpoints', () => {
  it('marks the last user/tool-result boundary, the system end, the tools end and the opening before the first reply', () => {
    expect(planBreakpoints(req([sys, user, call, result], [tool]))).toEqual({ history: 3, system: true, tools: true, first: 1, count: 4 });
    // The opening ends with the last message before the first reply: an inline system message after the first user message too.
    const env: NeutralMessage = { role: 'system', content: 'environment' };
    expect(planBreakpoints(req([sys, user, env, call, result])).first).toBe(2);
    // No reply yet: the history marker ends the opening itself.
    expect(planBreakpoints(req([sys, user], [tool])).first).toBeUndefined();
  });

  it('puts the history mark after a trailing system message, which the next request keeps (append policy, Claude Code\'s inline environment text)', () => {
    const appended: NeutralMessage = { role: 'system', content: 'new rules' };
    expect(planBreakpoints(req([sys, user, appended])).history).toBe(2);
    // The leading system prompt alone is not history.
    expect(planBreakpoints(req([sys])).history).toBeUndefined();
  });

  it('gives the history mark first when the client already holds markers', () => {
    expect(planBreakpoints(req([sys, user, call, result], [tool]), 2)).toEqual({ history: 3, system: true, tools: false, count: 2 });
    expect(planBreakpoints(req([sys, user], [tool]), 3)).toEqual({ history: 1, system: false, tools: false, count: 1 });
    expect(planBreakpoints(req([sys, user], [tool]), 4)).toEqual({ system: false, tools: false, count: 0 });
  });

  it('places nothing where nothing is stable', () => {
    expect(planBreakpoints(req([sys]))).toEqual({ system: false, tools: false, count: 0 });
    expect(planBreakpoints(req([user]))).toEqual({ history: 0, system: false, tools: false, count: 1 });
  });
});
