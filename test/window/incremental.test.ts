/**
 * `build` costs O(new entries) in the common case (no trim, same origin): it extends the previous
 * build's rendering instead of walking and re-rendering every entry. Checked with the window's
 * work counters (deterministic), and once with a clock, interleaving a short and a long session.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { foldEvents, type WindowInput, type WindowResult, type WindowState } from '../../src/window/index.js';
import { ORIGIN_A, ORIGIN_B, runSession, type GenOptions } from './gen-session.js';

const RECIPE = { high_water: 10_000_000, low_water: 5_000_000 };
const QUIET = { recipe: RECIPE, rewrites: false, summaries: false, sessionChanges: false, originSwitches: false, failures: false };
const INPUT: WindowInput = { route: 'r', model: ORIGIN_A.model, origin: ORIGIN_A, params: {} };

class Driver {
  readonly state: WindowState;
  #seq: number;

  constructor(size: number, options: GenOptions = QUIET) {
    const events = runSession(21, size, options).events;
    this.state = foldEvents(events);
    this.#seq = events.at(-1)!.seq;
    this.state.build(INPUT);
  }

  event(body: object): void {
    this.state.apply({ ...body, seq: ++this.#seq, ts: 't' } as LogEvent);
  }

  /** One turn of the live loop: a client message, the request, its reply. */
  turn(i: number): WindowResult {
    this.event({ type: 'client.msg', msg: { role: 'user', content: `turn ${i} `.repeat(20) } });
    const r = this.send();
    this.event({ type: 'llm.resp', req: this.#seq, reply: { content: 'ok '.repeat(30), finish_reason: 'stop' }, origin: ORIGIN_A, timings: { total_ms: 1 } });
    return r;
  }

  /** Build the next request and log it. */
  send(): WindowResult {
    const r = this.state.build(INPUT);
    this.event({ type: 'llm.req', digest: r.digest, recipe_version: this.state.recipe!.version, route: 'r', model: INPUT.model, origin: ORIGIN_A, params: {}, elided: r.elided, ...(r.folded.length === 0 ? {} : { folded: r.folded }), est_tokens: r.estTokens });
    return r;
  }
}

const MERGED = /^\[elided seq=\d+-\d+\]$/;

describe('incremental build', () => {
  it('walks and renders only what is new when the request only appends', () => {
    const d = new Driver(600);
    d.turn(0); // settle the generated session's last reply
    const size = d.state.build(INPUT).request.messages.length;
    expect(size).toBeGreaterThan(1500);
    const before = { ...d.state.stats };
    d.event({ type: 'client.msg', msg: { role: 'user', content: 'one more' } });
    d.state.build(INPUT);
    expect(d.state.stats.walked - before.walked).toBe(1);
    expect(d.state.stats.rendered - before.rendered).toBe(1);

    const mid = { ...d.state.stats };
    d.event({ type: 'llm.resp', req: 0, reply: { content: null, tool_calls: [{ id: 'x1', name: 'read', arguments: '{}' }, { id: 'x2', name: 'read', arguments: '{}' }], finish_reason: 'tool_calls' }, origin: ORIGIN_A, timings: { total_ms: 1 } });
    d.event({ type: 'client.msg', msg: { role: 'tool', tool_call_id: 'x1', content: 'r1' } });
    d.state.build(INPUT); // a batch half answered: re-rendered next time
    d.event({ type: 'client.msg', msg: { role: 'tool', tool_call_id: 'x2', content: 'r2' } });
    d.state.build(INPUT);
    expect(d.state.stats.walked - mid.walked).toBe(2 + 3);
    expect(d.state.stats.rendered - mid.rendered).toBe(2 + 2);
  });

  it('an origin switch walks everything again but renders only the entries whose blocks differ', () => {
    const d = new Driver(200);
    const toA = d.state.build(INPUT);
    const before = { ...d.state.stats };
    const toB = d.state.build({ ...INPUT, origin: ORIGIN_B, model: ORIGIN_B.model });
    const walked = d.state.stats.walked - before.walked;
    expect(walked).toBeGreaterThan(400);
    // Every reply that carried A's blocks is rendered once more, without them.
    const withBlocks = toA.request.messages.filter((m) => m.role === 'assistant' && m.blocks !== undefined).length;
    expect(withBlocks).toBeGreaterThan(20);
    expect(toB.request.messages.some((m) => m.role === 'assistant' && m.blocks !== undefined)).toBe(false);
    expect(d.state.stats.rendered - before.rendered).toBe(withBlocks);
    const back = { ...d.state.stats };
    d.state.build(INPUT);
    expect(d.state.stats.rendered - back.rendered).toBe(0);
  });

  it('the next request of a 1000-request session costs under 3x that of a 10-request one', () => {
    const short = new Driver(10);
    const long = new Driver(1000);
    expect(long.state.build(INPUT).request.messages.length).toBeGreaterThan(2500);
    const times = { short: [] as number[], long: [] as number[] };
    // Interleaved, so a busy machine slows both alike; medians, so a pause does not count.
    for (let i = 0; i < 300; i++) {
      for (const [name, d] of [['short', short], ['long', long]] as const) {
        const t0 = performance.now();
        d.turn(i);
        times[name].push(performance.now() - t0);
      }
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    const ratio = median(times.long) / median(times.short);
    // About 1.6 on an idle 2-core machine: the long request copies two arrays of 2,500 pointers.
    expect(ratio, 'cost of the 1000-request session\'s next request over the 10-request one\'s').toBeLessThan(3);
  });
});

describe('incremental build under window-v2 (merged placeholders)', () => {
  // Small enough that the generated session trims often, so runs of elided replies build up.
  const TRIMMING: GenOptions = { ...QUIET, recipe: { version: 'window-v2', high_water: 16_000, low_water: 8000 } };

  it('walks and renders only what is new when the request only appends, with merged runs in the window', () => {
    const d = new Driver(400, TRIMMING);
    d.turn(0);
    const settled = d.state.build(INPUT);
    expect(settled.trimmed).toBe(false);
    const merged = settled.request.messages.filter((m) => m.role === 'assistant' && MERGED.test(m.content ?? ''));
    expect(merged.length).toBeGreaterThan(3);
    const before = { ...d.state.stats };
    d.event({ type: 'client.msg', msg: { role: 'user', content: 'one more' } });
    const next = d.state.build(INPUT);
    expect(next.trimmed).toBe(false);
    expect(d.state.stats.walked - before.walked).toBe(1);
    expect(d.state.stats.rendered - before.rendered).toBe(1);
    // The runs are the same objects: nothing before the new message was rendered again.
    expect(next.request.messages.slice(0, -1)).toEqual(settled.request.messages);
    expect(next.request.messages.filter((m) => merged.includes(m))).toHaveLength(merged.length);
  });

  it('keeps a trim\'s rendering once its llm.req is logged: the request after a trim renders only what is new', () => {
    const d = new Driver(400, TRIMMING);
    let trim: WindowResult | undefined;
    for (let i = 0; i < 200 && trim === undefined; i++) {
      const r = d.turn(i);
      if (r.trimmed) trim = r;
    }
    expect(trim).toBeDefined();
    expect(trim!.request.messages.some((m) => m.role === 'assistant' && MERGED.test(m.content ?? ''))).toBe(true);
    const before = { ...d.state.stats };
    d.event({ type: 'client.msg', msg: { role: 'user', content: 'after the trim' } });
    const next = d.send();
    expect(next.trimmed).toBe(false);
    // The reply that followed the trim, and the new message.
    expect(d.state.stats.walked - before.walked).toBe(2);
    expect(d.state.stats.rendered - before.rendered).toBe(2);
    expect(next.request.messages.slice(0, trim!.request.messages.length)).toEqual(trim!.request.messages);
  });
});
