import { describe, expect, it } from 'vitest';
import { isOpenAIReasoningModel, reasons } from '../../src/core/openai-family.js';
import { droppedFields, withoutSampling } from '../../src/dialects/model-params.js';

describe('OpenAI reasoning models (docs/wires.md, OpenAI)', () => {
  it('are the o-series and gpt-5 and later, with or without an org prefix, but not gpt-5-chat', () => {
    for (const m of ['o1', 'o3', 'o4-mini', 'o1-preview', 'gpt-5', 'gpt-5-mini', 'gpt-5.1', 'gpt-5.6-sol', 'openai/gpt-5.2', 'gpt-6', 'gpt-5.1-codex']) {
      expect(isOpenAIReasoningModel(m), m).toBe(true);
    }
    for (const m of ['gpt-4o', 'gpt-4.1', 'gpt-5-chat-latest', 'omni-moderation', 'gpt-50x', 'sim-model']) expect(isOpenAIReasoningModel(m), m).toBe(false);
  });

  it('reason unless the request says none, where the model takes none (gpt-5.1 and later, not codex)', () => {
    expect(reasons('o3', undefined)).toBe(true);
    expect(reasons('gpt-5', 'none')).toBe(true);
    expect(reasons('gpt-5.1', undefined)).toBe(false);
    expect(reasons('gpt-5.1', 'none')).toBe(false);
    expect(reasons('gpt-5.6', 'low')).toBe(true);
    expect(reasons('gpt-5.1-codex', undefined)).toBe(true);
    expect(reasons('gpt-4o', 'high')).toBe(false);
  });
});

describe('withoutSampling', () => {
  it('takes out the sampling fields and the passed-through logprobs while the model reasons, and names them', () => {
    const params = {
      temperature: 0.2, top_p: 0.9, presence_penalty: 0.1, frequency_penalty: 0, max_tokens: 10, reasoning_effort: 'high',
      extra: { wire: 'openai-chat', fields: { logprobs: true, user: 'u1' }, dropped: ['prompt_cache_retention'] },
    };
    const out = withoutSampling(params, 'gpt-5.6');
    expect(out).toStrictEqual({
      max_tokens: 10, reasoning_effort: 'high', dropped: ['frequency_penalty', 'presence_penalty', 'temperature', 'top_p'],
      extra: { wire: 'openai-chat', fields: { user: 'u1' }, dropped: ['logprobs', 'prompt_cache_retention'] },
    });
    expect(droppedFields(out)).toStrictEqual(['frequency_penalty', 'logprobs', 'presence_penalty', 'prompt_cache_retention', 'temperature', 'top_p']);
  });

  it('returns the same object when the model does not reason on this request, or nothing is refused', () => {
    const p = { temperature: 0.2 };
    expect(withoutSampling(p, 'gpt-5.1')).toBe(p);
    expect(withoutSampling(p, 'gpt-4o')).toBe(p);
    const q = { max_tokens: 5 };
    expect(withoutSampling(q, 'o3')).toBe(q);
  });
});
