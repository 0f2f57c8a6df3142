/**
 * A long agent task through the window under each version: 2,000 tool rounds (a user message
 * every 250), every request built, logged and answered as the live loop does. Reports how large
 * the prompt gets against high water, how often it trims, and what a build costs.
 */
import type { Recipe, WindowVersion } from '../src/core/events.js';
import { runLongSession } from '../test/window/long-session.js';
import type { Line } from './session-sections.js';
import { fmt, median, percentile } from './stats.js';

export interface LongSessionRow {
  window: string;
  version: WindowVersion;
  rounds: number;
  highWater: number;
  lowWater: number;
  /** Largest estimate of a request as sent. */
  maxEst: number;
  overHigh: number;
  trims: number;
  /** Trims among the last 100 requests: each is a cache break. */
  trimsLast100: number;
  /** Messages in the last request. */
  messages: number;
  buildP50Us: number;
  buildP99Us: number;
  /** Median build of the requests that trimmed (a walk over every entry). */
  trimP50Us: number;
}

/** Water marks as the defaults derive them: 80% and 50% of context less reserve, a result cap of a 48th of high water. */
const WINDOWS: { name: string; recipe: Partial<Recipe> }[] = [
  { name: '8K context', recipe: { context: 8192, output_reserve: 1024, high_water: 5734, low_water: 3584, max_result_tokens: 119 } },
  { name: '32K context', recipe: { context: 32768, output_reserve: 4096, high_water: 22937, low_water: 14336, max_result_tokens: 477 } },
];

export function measureLongSession(rounds: number): LongSessionRow[] {
  const rows: LongSessionRow[] = [];
  for (const w of WINDOWS) {
    for (const version of ['window-v1', 'window-v2'] as const) {
      global.gc?.();
      const s = runLongSession({ rounds, recipe: { ...w.recipe, version }, userEvery: 250 });
      const builds = s.requests.map((r) => r.buildUs);
      rows.push({
        window: w.name,
        version,
        rounds,
        highWater: s.recipe.high_water,
        lowWater: s.recipe.low_water,
        maxEst: Math.max(...s.requests.map((r) => r.estTokens)),
        overHigh: s.requests.filter((r) => r.estTokens > s.recipe.high_water).length,
        trims: s.requests.filter((r) => r.trimmed).length,
        trimsLast100: s.requests.slice(-100).filter((r) => r.trimmed).length,
        messages: s.requests.at(-1)!.messages,
        buildP50Us: median(builds),
        buildP99Us: percentile(builds, 99),
        trimP50Us: median(s.requests.filter((r) => r.trimmed).map((r) => r.buildUs)),
      });
    }
  }
  return rows;
}

/** The results section; over budget when a window-v2 request goes over high water. */
export async function longSessionSection(line: Line): Promise<boolean> {
  const rows = measureLongSession(2000);
  line('## Window: a 2,000-round tool loop, window-v1 against window-v2');
  line();
  line('One task of 2,000 tool rounds (one to three calls each, generated results; a user message every 250 rounds), each');
  line('request built, logged and answered as the live loop does (test/window/long-session.ts). Under window-v1 every elided');
  line('reply stays as its own `[elided seq=N]`; under window-v2 adjacent ones are one `[elided seq=A-B]`. Estimates in tokens;');
  line('build time is the wall time of one `build`, trims included.');
  line();
  line('| window | version | high / low water | max prompt estimate | requests over high water | trims | trims in the last 100 requests | messages in the last request | build p50 (µs) | build p99 (µs) | trimming build p50 (µs) |');
  line('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    line(`| ${r.window} | ${r.version} | ${r.highWater} / ${r.lowWater} | ${r.maxEst} | ${r.overHigh} | ${r.trims} | ${r.trimsLast100} | ${r.messages} | ${fmt(r.buildP50Us)} | ${fmt(r.buildP99Us)} | ${fmt(r.trimP50Us)} |`);
  }
  const over = rows.filter((r) => r.version === 'window-v2' && r.overHigh > 0);
  line();
  line(over.length === 0 ? 'window-v2 stayed at or under high water on every request.' : `window-v2 went over high water (${over.map((r) => r.window).join(', ')}): OVER BUDGET.`);
  line();
  return over.length === 0;
}
