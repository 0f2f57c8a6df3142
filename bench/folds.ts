/**
 * Folds (window-v3) on an agent's trace: the same generated session (test/window/agent-trace.ts,
 * Claude Code's tool shapes: reads, edits, reads again, failing tests run again) through the window
 * with folds and without, and under window-v2 for reference. Cached tokens are what a prefix cache
 * reads: each request's prefix shared with the request before it.
 */
import type { Recipe } from '../src/core/events.js';
import { runAgentTrace, traceFigures, type TraceFigures } from '../test/window/agent-trace.js';
import type { Line } from './session-sections.js';
import { fmt, pct } from './stats.js';

const ROUNDS = 500;
/** Sized as the defaults size them: high water 80% and low 50% of context less reserve, the cap a 48th of high water. */
const WINDOWS: { name: string; recipe: Partial<Recipe> }[] = [
  { name: '32K context', recipe: { context: 32768, output_reserve: 4096, high_water: 22937, low_water: 14336, max_result_tokens: 477, protected_entries: 4 } },
  { name: '48K context', recipe: { context: 49152, output_reserve: 4096, high_water: 36044, low_water: 22528, max_result_tokens: 750, protected_entries: 4 } },
];
const RUNS: { name: string; recipe: Partial<Recipe> }[] = [
  { name: 'window-v3, folds', recipe: { version: 'window-v3' } },
  { name: 'window-v3, folds = false', recipe: { version: 'window-v3', folds: false } },
  { name: 'window-v2', recipe: { version: 'window-v2' } },
];

export function measureFolds(): { window: string; run: string; f: TraceFigures }[] {
  const rows: { window: string; run: string; f: TraceFigures }[] = [];
  for (const w of WINDOWS) {
    for (const r of RUNS) rows.push({ window: w.name, run: r.name, f: traceFigures(runAgentTrace({ rounds: ROUNDS, recipe: { ...w.recipe, ...r.recipe } })) });
  }
  return rows;
}

/** Over budget when folds break the prefix more often, or send more tokens, than the same trace without them. */
export async function foldsSection(line: Line): Promise<boolean> {
  const rows = measureFolds();
  line(`## Window: folds on an agent session that reads the same files again (${ROUNDS} requests)`);
  line();
  line('One generated session (test/window/agent-trace.ts): an agent reads the files of its task, edits them, reads them again,');
  line('reads long ones in ranges, runs failing tests until they pass, and sometimes fails a call and tries again; a new task every');
  line('25 rounds. The same client events each time; only the window differs. Tokens are the window\'s estimate (bytes/3); cached');
  line('is the prefix each request shares with the one before it, what a prefix cache reads; every break is a trim.');
  line();
  line('| window | run | prompt tokens sent | cached | cache-read efficiency | prefix breaks | folds (requests) |');
  line('|---|---|---:|---:|---:|---:|---:|');
  for (const { window, run, f } of rows) line(`| ${window} | ${run} | ${f.sent} | ${f.cached} | ${pct(f.cached, f.sent)} | ${f.breaks} | ${f.folds} (${f.foldingRequests}) |`);
  line();
  let ok = true;
  for (const w of WINDOWS) {
    const on = rows.find((r) => r.window === w.name && r.run === RUNS[0]!.name)!.f;
    const off = rows.find((r) => r.window === w.name && r.run === RUNS[1]!.name)!.f;
    const fine = on.breaks <= off.breaks && on.sent < off.sent;
    ok &&= fine;
    line(`${w.name}: folds send ${fmt((1 - on.sent / off.sent) * 100, 1)}% fewer tokens with ${on.breaks} prefix breaks against ${off.breaks} — ${fine ? 'within budget' : 'OVER BUDGET'}.`);
  }
  line();
  line('window-v2 cuts a whole-file read at the one cap where window-v3 keeps twice as much, so here its window fills more slowly and');
  line('trims less often. The trace does not model what the cut costs: an agent reading in ranges the lines a cut left out, each a');
  line('request of the whole context (docs/decisions.md, Named cuts of large results).');
  line();
  return ok;
}
