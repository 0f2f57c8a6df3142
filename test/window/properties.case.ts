/**
 * Properties of the window over generated sessions driven through the real loop (gen-session.ts):
 * prefix stability between append-only requests, trims only on high-water crossings, whole
 * tool-call pairs, user messages never elided, exact replay from JSON lines, and opaque blocks
 * only after the prefix they were made with. Small recipes so that high water is crossed often.
 *
 * One suite, run once per window version by its own test file (so the two run in parallel).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Recipe, WindowVersion } from '../../src/core/events.js';
import { rulesOf } from '../../src/window/recipe.js';
import { checkBlockPrefixes, checkFolds, checkPairs, checkPrefixAndTrims, checkReplay, checkRunsMerged, checkUsers } from './checks.js';
import { generateSession, runSession, type GenOptions } from './gen-session.js';

export function describeProperties(version: WindowVersion): void {
  const recipeArb: fc.Arbitrary<Partial<Recipe>> = fc.record({
    high_water: fc.integer({ min: 1200, max: 4000 }),
    protected_entries: fc.integer({ min: 0, max: 6 }),
    max_result_tokens: fc.integer({ min: 60, max: 400 }),
    system: fc.constantFrom('follow' as const, 'append' as const),
  }).map((r) => ({ ...r, low_water: Math.floor(r.high_water / 2), version }));

  const optionsArb: fc.Arbitrary<GenOptions> = fc.record({
    recipe: recipeArb,
    rewrites: fc.boolean(),
    summaries: fc.boolean(),
    originSwitches: fc.boolean(),
    sessionChanges: fc.boolean(),
    failures: fc.boolean(),
  });
  const small: GenOptions = { recipe: { version } };
  // CPU-bound, and run once per version beside other suites on a shared 2-core machine.
  const SLOW = 120_000;
  const merging = rulesOf(version).mergeElided;

  describe(`window properties over generated sessions (${version})`, () => {
    it('is deterministic for a seed', () => {
      const a = generateSession(7, 20, small);
      const b = generateSession(7, 20, small);
      expect(JSON.stringify(a)).toBe(JSON.stringify(b));
      expect(JSON.stringify(generateSession(8, 20, small))).not.toBe(JSON.stringify(a));
      expect(a[0]).toMatchObject({ type: 'session.start', recipe: { version } });
      expect(a.filter((e) => e.type === 'llm.req')).toHaveLength(20);
    });

    it('holds (a)-(f) on every request, and every request replays from JSON lines', () => {
      const totals = { prefixes: 0, trims: 0, batches: 0, users: 0, replays: 0, blocks: 0, merged: 0, folds: 0 };
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 4, max: 40 }), optionsArb, (seed, size, options) => {
          const s = runSession(seed, size, options);
          const pt = checkPrefixAndTrims(s);
          totals.prefixes += pt.prefixes;
          totals.trims += pt.trims;
          totals.batches += checkPairs(s);
          totals.users += checkUsers(s);
          totals.blocks += checkBlockPrefixes(s);
          totals.replays += checkReplay(s);
          if (merging) totals.merged += checkRunsMerged(s);
          totals.folds += checkFolds(s);
        }),
        { numRuns: 220 },
      );
      // Not vacuous: each property met many real cases.
      expect(totals.prefixes).toBeGreaterThan(1000);
      expect(totals.trims).toBeGreaterThan(100);
      expect(totals.batches).toBeGreaterThan(1000);
      expect(totals.blocks).toBeGreaterThan(500);
      expect(totals.replays).toBeGreaterThan(2000);
      if (merging) expect(totals.merged).toBeGreaterThan(500);
      // These small windows keep few results past a trim, so folds are rare here; fold-trace.test.ts
      // exercises them on an agent's trace. Before window-v3 there are none.
      if (!rulesOf(version).folds) expect(totals.folds).toBe(0);
    }, SLOW);

    it('holds over many more sessions with the default small recipe (replay sampled)', () => {
      let sessions = 0;
      let trims = 0;
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 3, max: 24 }), (seed, size) => {
          const s = runSession(seed, size, small);
          trims += checkPrefixAndTrims(s).trims;
          checkPairs(s);
          checkUsers(s);
          checkBlockPrefixes(s);
          if (merging) checkRunsMerged(s);
          // The last request and one in the middle: the O(n^2) full replay is the test above.
          checkReplay(s, (i) => i === s.requests.length - 1 || i === s.requests.length >> 1);
          sessions++;
        }),
        { numRuns: 1200 },
      );
      expect(sessions).toBe(1200);
      expect(trims).toBeGreaterThan(200);
    }, SLOW);

    it('replays long sessions (many trims, many placeholders)', () => {
      for (const seed of [11, 12]) {
        const s = runSession(seed, 200, { recipe: { high_water: 1500, low_water: 700, version } });
        expect(checkPrefixAndTrims(s).trims).toBeGreaterThan(10);
        checkPairs(s);
        checkBlockPrefixes(s);
        if (merging) expect(checkRunsMerged(s)).toBeGreaterThan(10);
        expect(checkReplay(s, (i) => i % 10 === 9)).toBe(20);
      }
    });
  });
}
