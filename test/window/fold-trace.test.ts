/**
 * A long agent session that reads the same files again and again (agent-trace.ts), through the
 * window with folds and without, on the same trace: folds happen only on the requests that trim,
 * break no prefix of their own, and fewer tokens are sent (docs/decisions.md, Folds and per-tool caps).
 */
import { describe, expect, it } from 'vitest';
import type { EventOf, LogEvent, Recipe } from '../../src/core/events.js';
import { runAgentTrace, traceFigures } from './agent-trace.js';
import { checkFolds, checkPairs, checkPrefixAndTrims, checkReplay } from './checks.js';

/** A 48K window sized as the defaults size it: high water 80%, low 50%, the result cap a 48th of high water. */
const WINDOW: Partial<Recipe> = { context: 49152, output_reserve: 4096, high_water: 36044, low_water: 22528, max_result_tokens: 750, protected_entries: 4 };
const ROUNDS = 500;

describe('folds over an agent session that reads the same files again', () => {
  const on = runAgentTrace({ rounds: ROUNDS, recipe: { ...WINDOW, version: 'window-v3' } });
  const off = runAgentTrace({ rounds: ROUNDS, recipe: { ...WINDOW, version: 'window-v3', folds: false } });

  it('is the same trace either way: the same client events, only the window differs', () => {
    const client = (events: LogEvent[]) => events.filter((e) => e.type === 'client.msg' || e.type === 'llm.resp').map((e) => JSON.stringify({ ...e, seq: 0, ts: '' }));
    expect(client(on.events)).toEqual(client(off.events));
  });

  it('folds only on requests that trim, at or after their first elision; stand-ins never change; the prefix holds between trims', () => {
    const folds = checkFolds(on);
    expect(folds).toBeGreaterThan(20);
    expect(checkFolds(off)).toBe(0);
    const { prefixes, trims } = checkPrefixAndTrims(on);
    expect(trims).toBeGreaterThan(5);
    expect(prefixes).toBeGreaterThan(ROUNDS - 2 * trims);
    checkPairs(on);
    // The log: each fold is on a trimming llm.req, with what superseded it.
    const reqs = on.events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
    const folding = reqs.filter((e) => e.folded !== undefined);
    expect(folding.length).toBeGreaterThan(3);
    for (const e of folding) {
      expect(e.elided.length).toBeGreaterThan(0);
      for (const f of e.folded!) expect(f.by).toBeGreaterThan(f.seq);
    }
    expect(folding.reduce((n, e) => n + e.folded!.length, 0)).toBe(folds);
  });

  it('breaks the prefix no more often, and sends fewer tokens, than without folds', () => {
    const a = traceFigures(on);
    const b = traceFigures(off);
    expect(a.breaks).toBeLessThanOrEqual(b.breaks);
    // Every break is a trim: a fold breaks nothing a trim did not.
    expect(a.breaks).toBe(a.trims);
    expect(a.sent).toBeLessThan(b.sent);
    expect(a.cached / a.sent).toBeGreaterThan(0.9);
  });

  it('replays every request from its log, folds included', () => {
    expect(checkReplay(on, (i) => i % 5 === 0 || on.requests[i]!.result.folded.length > 0)).toBeGreaterThan(ROUNDS / 5);
  });
});
