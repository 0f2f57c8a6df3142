import { describe, expect, it } from 'vitest';
import { PRESET_NAMES, PRESETS, isPresetName, presetOf } from '../../src/config/presets.js';

describe('presets', () => {
  it('has every preset the design names', () => {
    expect([...PRESET_NAMES].sort()).toEqual([
      'anthropic', 'baseten', 'cerebras', 'deepseek', 'fireworks', 'gemini', 'gemini-openai', 'generic', 'groq',
      'ollama', 'openai', 'openai-responses', 'openrouter', 'sglang', 'sim', 'together', 'vllm', 'xai', 'zai',
    ]);
    expect(isPresetName('openai')).toBe(true);
    expect(isPresetName('toString')).toBe(false);
  });

  it('gives thinking back in the field each server reads', () => {
    const out = Object.fromEntries(PRESET_NAMES.map((n) => [n, presetOf(n).reasoningOut]));
    expect(out).toMatchObject({
      openai: 'none', // sends none, refuses unknown fields
      cerebras: 'reasoning', // reasoning_content is a 400 there
      vllm: 'reasoning',
      groq: 'reasoning',
      deepseek: 'reasoning_content',
      sglang: 'reasoning_content',
      generic: 'reasoning_content',
      sim: 'reasoning_content',
      'gemini-openai': 'none',
      anthropic: 'none', // only signed blocks go back
    });
    expect(PRESET_NAMES.filter((n) => presetOf(n).reasoningOnToolTurns)).toEqual(['deepseek']);
  });

  it('names each provider\'s documented affinity headers, in lower case', () => {
    expect(PRESETS.openrouter.affinityHeaders).toEqual(['x-session-id']);
    expect(PRESETS.fireworks.affinityHeaders).toEqual(['x-session-affinity']);
    expect(PRESETS.xai.affinityHeaders).toEqual(['x-grok-conv-id']);
    expect(PRESETS.baseten.affinityHeaders).toContain('x-baseten-session-id');
    expect(PRESETS.zai.affinityHeaders).toEqual(['x-session-id']);
    expect(PRESETS.together.affinityHeaders).toEqual([]);
    for (const name of PRESET_NAMES) {
      for (const header of presetOf(name).affinityHeaders) expect(header).toBe(header.toLowerCase());
    }
  });

  it('sends the key in the body only where the server takes or ignores unknown fields', () => {
    expect(PRESETS.openai.cacheKey).toBe('session');
    expect(PRESETS.openrouter.cacheKey).toBe('session');
    for (const strict of ['cerebras', 'groq', 'gemini-openai'] as const) expect(PRESETS[strict].cacheKey).toBe('header');
    expect(PRESETS.anthropic.cacheKey).toBe('off');
  });

  it('takes top-level cache_control only on OpenRouter by default (Anthropic places breakpoints); Anthropic asks by default', () => {
    expect(PRESET_NAMES.filter((n) => presetOf(n).topLevelCacheControl).sort()).toEqual(['openrouter']);
    expect(PRESET_NAMES.filter((n) => presetOf(n).cacheControl !== 'off')).toEqual(['anthropic']);
  });

  it('names each preset\'s wire format; every one has its dialect now', () => {
    expect(PRESET_NAMES.filter((n) => !presetOf(n).ready).sort()).toEqual([]);
    expect(PRESETS.anthropic.wire).toBe('anthropic-messages');
    expect(PRESETS.ollama.wire).toBe('ollama-chat');
    expect(PRESETS['openai-responses'].wire).toBe('openai-responses');
    expect(PRESETS.gemini.wire).toBe('gemini');
    const own = ['anthropic', 'ollama', 'openai-responses', 'gemini'];
    for (const name of PRESET_NAMES.filter((n) => !own.includes(n))) expect(presetOf(name).wire).toBe('openai-chat');
  });

  it('has an https address for every hosted preset, and none for generic and sim', () => {
    for (const name of PRESET_NAMES) {
      const url = presetOf(name).baseUrl;
      if (name === 'generic' || name === 'sim') expect(url).toBeUndefined();
      else expect(url).toMatch(/^https?:\/\/[^/]+/);
      if (url !== undefined) expect(url.endsWith('/')).toBe(false);
    }
  });
});
