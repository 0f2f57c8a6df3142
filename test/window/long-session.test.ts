/**
 * A task of 2,000 tool rounds (long-session.ts). Under window-v1 each elided reply keeps a
 * placeholder of its own; they pile up until a trim cannot get back under high water and nearly
 * every request trims. Under window-v2 a user turn's elided replies are one placeholder, so every
 * trim gets back under low water.
 */
import { describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/core/events.js';
import { buildAt } from '../../src/window/index.js';
import { runLongSession } from './long-session.js';

const WATER: Partial<Recipe> = { high_water: 4000, low_water: 2000, max_result_tokens: 300 };

describe('a long tool loop', () => {
  it('under window-v2 stays at or under high water on every request, and every trim reaches low water', () => {
    const s = runLongSession({ rounds: 2000, recipe: { ...WATER, version: 'window-v2' }, userEvery: 250 });
    expect(s.requests).toHaveLength(2000);
    const trims = s.requests.filter((r) => r.trimmed);
    expect(trims.length).toBeGreaterThan(100);
    expect(s.requests.filter((r) => r.estTokens > 4000).map((r) => r.seq)).toEqual([]);
    expect(trims.filter((r) => r.estTokens > 2000).map((r) => r.seq)).toEqual([]);
    // A trim once in a while, not on every request.
    expect(s.requests.slice(-100).filter((r) => r.trimmed).length).toBeLessThan(30);
    // One placeholder per user turn of elided rounds (8 turns), and the live rounds after them.
    const last = buildAt(s.events, s.requests.at(-1)!.seq);
    const placeholders = last.request.messages.filter((m) => m.role === 'assistant' && /^\[elided seq=\d+-\d+\]$/.test(m.content ?? ''));
    expect(placeholders).toHaveLength(8);
    expect(last.request.messages.length).toBeLessThan(100);
  });

  it('under window-v1 the placeholders pile up: trims end above high water, and nearly every request trims', () => {
    const s = runLongSession({ rounds: 700, recipe: { ...WATER, version: 'window-v1' }, userEvery: 250 });
    const tail = s.requests.slice(-100);
    expect(tail.filter((r) => r.trimmed).length).toBeGreaterThan(90);
    expect(tail.filter((r) => r.trimmed && r.estTokens > 4000).length).toBeGreaterThan(20);
    const last = buildAt(s.events, s.requests.at(-1)!.seq);
    const placeholders = last.request.messages.filter((m) => m.role === 'assistant' && /^\[elided seq=\d+\]$/.test(m.content ?? ''));
    expect(placeholders.length).toBeGreaterThan(600);
  });
});
