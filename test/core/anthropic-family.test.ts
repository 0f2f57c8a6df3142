/** The models that bind a signed thinking block to its prefix, by Anthropic's documented list (src/core/anthropic-family.ts). */
import { describe, expect, it } from 'vitest';
import { bindsThinkingToPrefix } from '../../src/core/anthropic-family.js';

describe('bindsThinkingToPrefix', () => {
  it('is true for the documented models and later versions, with prefixes and date suffixes', () => {
    for (const m of ['claude-fable-5-1', 'claude-fable-5-2', 'claude-mythos-5-1', 'claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5',
      'claude-sonnet-5-5-20261001', 'anthropic/claude-opus-5-5', 'us.anthropic.claude-sonnet-5-5', 'claude-sonnet-6-0', 'claude-opus-5-6', 'Claude-Sonnet-5-5']) {
      expect(bindsThinkingToPrefix(m), m).toBe(true);
    }
  });

  it('is false for earlier versions and other names', () => {
    for (const m of ['claude-fable-5-0', 'claude-opus-5', 'claude-opus-5-1', 'claude-sonnet-4-6', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5', 'claude-3-7-sonnet-20250219', 'claude-sim', 'gpt-5.1', 'claude-sonnet-5-50x']) {
      expect(bindsThinkingToPrefix(m), m).toBe(false);
    }
  });
});
