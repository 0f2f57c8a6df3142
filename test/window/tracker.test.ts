import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WINDOW_VERSIONS, type EventOf, type LogEvent } from '../../src/core/events.js';
import { foldEvents, StartTracker } from '../../src/window/index.js';
import { runSession } from './gen-session.js';
import { LogBuilder } from './log-builder.js';

/** The events as JSON lines, with each line's byte offset. */
function lines(events: readonly LogEvent[]): { events: LogEvent[]; offsets: number[] } {
  const offsets: number[] = [];
  let at = 0;
  const parsed = events.map((e) => {
    const line = JSON.stringify(e) + '\n';
    offsets.push(at);
    at += Buffer.byteLength(line);
    return JSON.parse(line) as LogEvent;
  });
  return { events: parsed, offsets };
}

/** At every request: the tracker's events build the digest the log recorded. Returns how far starts moved. */
function checkTracker(all: readonly LogEvent[]): { requests: number; moved: number } {
  const { events, offsets } = lines(all);
  const byOffset = new Map(offsets.map((o, i) => [o, i]));
  const tracker = new StartTracker();
  let requests = 0;
  let moved = 0;
  events.forEach((event, i) => {
    if (event.type === 'llm.req') {
      const point = tracker.point!;
      const start = byOffset.get(point.start.offset)!;
      expect(events[start]!.seq).toBe(point.start.seq);
      const carried = point.carried.map((p) => events[byOffset.get(p.offset)!]!);
      expect(carried.map((e) => e.seq)).toEqual(point.carried.map((p) => p.seq));
      expect(carried.every((e) => e.seq < point.start.seq)).toBe(true);
      const subset = [...carried, ...events.slice(start, i)];
      const req = event as EventOf<'llm.req'>;
      const built = foldEvents(subset).build({ route: req.route, model: req.model, origin: req.origin, params: req.params });
      if (built.digest !== req.digest) throw new Error(`seq ${req.seq}: tracker from ${point.start.seq} builds another request`);
      expect(built.elided).toEqual(req.elided);
      requests++;
      if (start > 0) moved++;
    }
    tracker.apply(event, offsets[i]!);
  });
  return { requests, moved };
}

describe('start tracker', () => {
  it('at every request of generated sessions, its events build the identical request', () => {
    let requests = 0;
    let moved = 0;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 5, max: 40 }), fc.constantFrom('follow' as const, 'append' as const), fc.constantFrom(...WINDOW_VERSIONS), (seed, size, system, version) => {
        const r = checkTracker(runSession(seed, size, { summaries: false, recipe: { system, version } }).events);
        requests += r.requests;
        moved += r.moved;
      }),
      { numRuns: 120 },
    );
    expect(requests).toBeGreaterThan(1500);
    expect(moved).toBeGreaterThan(50);
  });

  it('holds a session with a summary whole', () => {
    const events = runSession(3, 40).events;
    const withSummary = events.findIndex((e) => e.type === 'summary.add');
    expect(withSummary).toBeGreaterThan(0);
    const tracker = new StartTracker();
    events.forEach((e, i) => tracker.apply(e, i * 100));
    expect(tracker.point).toEqual({ start: { seq: 1, offset: 0 }, carried: [] });
    checkTracker(events);
  });

  it('moves to a rewrite of the whole history and carries the recipe, catalog and leading prompt', () => {
    for (const system of ['follow', 'append'] as const) {
      const log = new LogBuilder({ system }, { system: 'v1', tools: [] });
      log.user('u1');
      log.system('v2');
      log.reply({});
      const partial = log.add({ type: 'client.rewrite', from_seq: log.lastSeq }).seq;
      const tracker = new StartTracker();
      log.events.forEach((e) => tracker.apply(e, e.seq * 10));
      // A rewrite that keeps u1 is no start.
      expect(tracker.point!.start.seq).toBe(1);
      log.user('u2');
      const whole = log.add({ type: 'client.rewrite', from_seq: 4 }).seq;
      log.user('fresh');
      for (const e of log.events.filter((x) => x.seq > partial)) tracker.apply(e, e.seq * 10);
      const prompt = system === 'follow' ? 5 : 3;
      expect(tracker.point).toEqual({ start: { seq: whole, offset: whole * 10 }, carried: [{ seq: 1, offset: 10 }, { seq: 2, offset: 20 }, { seq: prompt, offset: prompt * 10 }] });
      const subset = [...tracker.point!.carried.map((p) => log.events[p.seq - 1]!), ...log.events.filter((e) => e.seq >= whole)];
      expect(foldEvents(subset).build({ route: 'r', model: 'm', origin: log.origin, params: {} }).digest).toBe(log.peek(log.origin, 'm').digest);
    }
  });
});
