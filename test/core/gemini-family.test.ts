import { describe, expect, it } from 'vitest';
import { requiresCallSignatures } from '../../src/core/gemini-family.js';

describe('requiresCallSignatures', () => {
  it('is Gemini 3 and later, and the aliases that name no version; not Gemini 2.x and before, nor other models', () => {
    for (const m of ['gemini-3-flash-preview', 'gemini-3.1-pro-preview', 'models/gemini-3.5-flash-lite', 'gemini-4-pro', 'gemini-flash-latest', 'gemini-pro-latest']) {
      expect(requiresCallSignatures(m), m).toBe(true);
    }
    for (const m of ['gemini-2.5-flash', 'gemini-2.0-flash-lite', 'gemini-1.5-pro', 'models/gemini-2.5-pro', 'gpt-5.6', 'claude-sonnet-5-5', 'gemma-3-27b', 'sim-model']) {
      expect(requiresCallSignatures(m), m).toBe(false);
    }
  });
});
