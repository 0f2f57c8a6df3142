/**
 * Logs of both window versions replay, and the versions differ only in how elided replies are
 * shown: window-v2 merges each run of adjacent `[elided seq=N]` replies into one `[elided seq=A-B]`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogEvent, WindowVersion } from '../../src/core/events.js';
import type { NeutralMessage } from '../../src/core/types.js';
import { buildAt, WindowState } from '../../src/window/index.js';
import { checkReplay } from './checks.js';
import { runSession } from './gen-session.js';

const SINGLE = /^\[elided seq=(\d+)\]$/;
const MERGED = /^\[elided seq=\d+-\d+\]$/;

const texts = (ms: readonly NeutralMessage[]) => ms.flatMap((m) => (typeof m.content === 'string' ? [m.content] : []));

/** A window-v1 request's messages as window-v2 shows them, written independently of the window. */
function mergeRuns(msgs: readonly NeutralMessage[]): NeutralMessage[] {
  const out: NeutralMessage[] = [];
  let run: { first: string; last: string } | undefined;
  for (const m of msgs) {
    const single = m.role === 'assistant' && m.tool_calls === undefined ? SINGLE.exec(m.content ?? '') : null;
    if (single === null) {
      run = undefined;
      out.push(m);
      continue;
    }
    if (run === undefined) {
      run = { first: single[1]!, last: single[1]! };
      out.push(m);
    } else {
      run.last = single[1]!;
      out[out.length - 1] = { role: 'assistant', content: `[elided seq=${run.first}-${run.last}]` };
    }
  }
  return out;
}

function withVersion(events: readonly LogEvent[], version: WindowVersion): LogEvent[] {
  return events.map((e) => (e.type === 'session.start' || e.type === 'session.resume' ? { ...e, recipe: { ...e.recipe, version } } : e));
}

describe('window-v1 and window-v2 logs', () => {
  it('a window-v1 log and a window-v2 log both replay to their recorded digests', () => {
    for (const version of ['window-v1', 'window-v2'] as const) {
      const s = runSession(31, 120, { recipe: { version, high_water: 1500, low_water: 700 } });
      expect(s.events[0]).toMatchObject({ type: 'session.start', recipe: { version } });
      expect(s.requests.filter((r) => r.result.trimmed).length).toBeGreaterThan(5);
      expect(checkReplay(s)).toBe(120);
      const merged = s.requests.flatMap((r) => texts(r.result.request.messages)).filter((t) => MERGED.test(t)).length;
      if (version === 'window-v1') expect(merged).toBe(0);
      else expect(merged).toBeGreaterThan(50);
    }
  });

  it('the same events give the same requests under both versions but for merged placeholders', () => {
    const s = runSession(32, 150, { recipe: { high_water: 1500, low_water: 700 } });
    const asV2 = withVersion(s.events, 'window-v2');
    let differ = 0;
    let same = 0;
    for (const req of s.requests) {
      // A trimming request chooses its elisions by the version's estimate; every other one is
      // fixed by the log's elisions.
      if (req.result.trimmed) continue;
      const v1 = req.result.request;
      const v2 = buildAt(asV2, req.seq);
      expect(v2.trimmed).toBe(false);
      expect(v2.request.messages).toEqual(mergeRuns(v1.messages));
      expect({ ...v2.request, messages: [] }).toEqual({ ...v1, messages: [] });
      if (v2.digest === req.result.digest) same++;
      else differ++;
    }
    expect(differ).toBeGreaterThan(20);
    expect(same).toBeGreaterThan(5);
  });
});

describe('logs written before window-v3', () => {
  // Written by the build before window-v3 (3a606a7) from runSession(41, 40, high water 1500, low 700):
  // its own code made these digests, so they hold whatever this build's generator does.
  for (const version of ['window-v1', 'window-v2'] as const) {
    it(`a ${version} log replays to its recorded digests and elisions`, () => {
      const text = readFileSync(join(import.meta.dirname, 'fixtures', `${version}.jsonl`), 'utf8');
      const events = text.trim().split('\n').map((l) => JSON.parse(l) as LogEvent);
      const state = new WindowState();
      let checked = 0;
      let trims = 0;
      for (const e of events) {
        if (e.type === 'llm.req') {
          const r = state.build({ route: e.route, model: e.model, origin: e.origin, params: e.params });
          expect(r.digest, `seq ${e.seq}`).toBe(e.digest);
          expect(r.elided).toEqual(e.elided);
          expect(r.folded).toEqual([]);
          checked++;
          if (r.trimmed) trims++;
        }
        state.apply(e);
      }
      expect(events[0]).toMatchObject({ type: 'session.start', recipe: { version } });
      expect(checked).toBe(40);
      expect(trims).toBeGreaterThan(5);
    });
  }
});
