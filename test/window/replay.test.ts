import { describe, expect, it } from 'vitest';
import { canonicalDigest } from '../../src/core/canonical.js';
import { ProxyError } from '../../src/core/errors.js';
import type { LogEvent, Recipe } from '../../src/core/events.js';
import { buildAt, foldEvents, UnknownRecipeVersionError, WindowState } from '../../src/window/index.js';
import { ORIGIN_A, ORIGIN_B, runSession, smallRecipe } from './gen-session.js';
import { LogBuilder } from './log-builder.js';

describe('recipe versions', () => {
  it('throws unknown_recipe_version for a version this build does not know, placeable by the caller', () => {
    const state = new WindowState();
    const recipe = { ...smallRecipe(), version: 'window-v99' } as unknown as Recipe;
    let caught: unknown;
    try {
      state.apply({ type: 'session.start', recipe, ids: [], seq: 1, ts: 't' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(UnknownRecipeVersionError);
    const err = caught as UnknownRecipeVersionError;
    expect(err.code).toBe('unknown_recipe_version');
    expect(err.version).toBe('window-v99');
    expect(err.message).toContain('"window-v99"');
    expect(err.message).toContain('window-v1');
    expect(err.at('s.jsonl', 3).message).toBe('s.jsonl:3: unknown window recipe version "window-v99"; this build knows window-v1, window-v2, window-v3, window-v4.');
  });

  it('checks a resume too, and wants session.start first', () => {
    const log = new LogBuilder();
    const bad = { type: 'session.resume', recipe: { ...smallRecipe(), version: 'window-v0' }, seq: 9, ts: 't' } as unknown as LogEvent;
    expect(() => log.state.apply(bad)).toThrow(UnknownRecipeVersionError);
    const fresh = new WindowState();
    expect(() => fresh.apply({ type: 'client.msg', msg: { role: 'user', content: 'hi' }, seq: 1, ts: 't' })).toThrow(ProxyError);
    expect(() => fresh.build({ route: 'r', model: 'm', origin: ORIGIN_A, params: {} })).toThrow(ProxyError);
  });
});

describe('digest and replay', () => {
  it('computes the digest incrementally, equal to canonicalDigest of the request, through trims and switches', () => {
    const s = runSession(5, 60, { recipe: { high_water: 1500, low_water: 700 } });
    expect(s.requests.some((r) => r.result.trimmed)).toBe(true);
    expect(new Set(s.requests.map((r) => r.input.origin)).size).toBe(2);
    for (const r of s.requests) expect(r.result.digest).toBe(canonicalDigest(r.result.request));
  });

  it('buildAt rebuilds a request from the events before it; other seqs are refused', () => {
    const s = runSession(6, 15);
    const events = s.events.map((e) => JSON.parse(JSON.stringify(e)) as LogEvent);
    const last = s.requests.at(-1)!;
    expect(buildAt(events, last.seq)).toEqual(last.result);
    expect(() => buildAt(events, 1)).toThrow(/not a logged request/);
  });

  it('a build does not change what the next build sees (pure but for memo caches)', () => {
    const s = runSession(8, 30, { recipe: { high_water: 1500, low_water: 700 } });
    const trimming = s.requests.find((r) => r.result.trimmed)!;
    const state = foldEvents(s.events.filter((e) => e.seq < trimming.seq));
    const input = trimming.input;
    const first = state.build(input);
    expect(state.build({ ...input, origin: ORIGIN_B === input.origin ? ORIGIN_A : ORIGIN_B })).toBeDefined();
    expect(state.build(input)).toEqual(first);
    expect(first.digest).toBe(trimming.result.digest);
  });

  it('a trim logged with other elisions than the build proposed rebuilds from the log', () => {
    const log = new LogBuilder({ high_water: 300, low_water: 100, protected_entries: 1, max_result_tokens: 10_000 });
    log.user('u1');
    log.reply({ calls: ['a'] });
    const ta = log.tool('a', 'x'.repeat(600));
    log.reply({ calls: ['b'] });
    const tb = log.tool('b', 'y'.repeat(600));
    log.user('u2');
    const proposed = log.peek();
    expect(proposed.elided).toEqual([ta, tb]);
    // The caller recorded only one of them: the log is the truth.
    log.add({ type: 'llm.req', digest: 'x', recipe_version: 'window-v1', route: 'r', model: 'm', origin: ORIGIN_A, params: {}, elided: [ta], est_tokens: 0 });
    log.user('u3');
    const live = log.peek();
    const replayed = foldEvents(log.events).build({ route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {} });
    expect(live).toEqual(replayed);
    expect(live.request.messages.map((m) => m.content)).toContain(`[elided seq=${ta}]`);
  });

  it('a resume with another result cap re-renders the results it cuts, and replays', () => {
    const log = new LogBuilder({ max_result_tokens: 1000 });
    log.user('u1');
    log.reply({ calls: ['a'], blocks: true });
    log.tool('a', Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n'));
    log.reply({ blocks: true });
    log.user('u2');
    const wide = log.send();
    expect(wide.request.messages[2]!.content).not.toContain('omitted');
    log.add({ type: 'session.resume', recipe: smallRecipe({ high_water: 100_000, low_water: 50_000, max_result_tokens: 100 }) });
    const narrow = log.send();
    expect(narrow.request.messages[2]!.content).toContain('omitted]');
    // The reply after the re-cut result lost its blocks; the one before kept them.
    expect(narrow.request.messages[1]).toHaveProperty('blocks');
    expect(narrow.request.messages[3]).not.toHaveProperty('blocks');
    expect(buildAt(log.events, narrow.seq).digest).toBe(narrow.digest);
  });
});
