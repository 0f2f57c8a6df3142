/**
 * The real qwen-code told a 60K context window compacts its history itself (past ~85% of it): it
 * asks for a summary on the conversation's own head and, when that reply is not one, again under the
 * summariser's own system prompt with no tools. Both are side requests (docs/how-it-works.md, Side
 * requests): built on the conversation's prefix as its log holds it, in sessions of their own, so
 * the conversation's log never takes the summariser's prompt, its system prompt or an empty catalog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../src/core/events.js';
import { AGENTS, figureLine, finished, longSession, replay, startLongWorld, type LongRun, type LongWorld } from './long-session.js';

const MARKER = 'You are the component that summarizes a conversation when its context window is about to overflow';

describe('qwen-code told a 60K context window: its own compactions are side requests', () => {
  const spec = AGENTS['qwen-code'];
  let lw: LongWorld | undefined;
  let r: LongRun;

  beforeAll(async () => {
    lw = await startLongWorld(spec);
    r = await longSession(lw, spec, { steps: 20, settings: { model: { generationConfig: { contextWindowSize: 60_000 } } } });
    console.log(`[long-session] ${figureLine(r.figures)}`);
  }, 300_000);
  afterAll(async () => {
    await lw?.close();
  });

  const asks = (): typeof r.asked => r.asked.filter((x) => JSON.stringify(x.body).includes(MARKER));
  const start = (events: readonly LogEvent[]) => events[0] as Extract<LogEvent, { type: 'session.start' }>;

  it('completes, nothing refused', () => {
    expect(r.run.code, r.run.stderr.slice(-1500)).toBe(0);
    expect(finished(r)).toBe(true);
    expect(r.world.tap.requests.every((x) => x.status === 200), JSON.stringify(r.world.tap.requests.map((x) => x.status))).toBe(true);
  });

  const onHead = (x: { body: Record<string, unknown> }): boolean => Array.isArray(x.body.tools) && x.body.tools.length > 0;
  const sideOf = (events: readonly LogEvent[]) => start(events).side;

  it('asked for summaries both ways, each answered in a side session of its own', () => {
    const both = asks();
    expect(both.filter(onHead).length, 'on the conversation\'s head').toBeGreaterThanOrEqual(2);
    expect(both.filter((x) => !onHead(x)).length, 'under its own system prompt').toBeGreaterThanOrEqual(2);
    const sides = r.files.map((f) => f.lines.map((l) => l.event)).filter((events) => sideOf(events) !== undefined);
    for (const events of sides) {
      expect(sideOf(events)).toEqual({ kind: 'compaction', client: 'Qwen Code' });
      expect(start(events).parent).toBeDefined();
    }
    // Each found its conversation: by its prefix, or by the conversation's latest reply, which it
    // holds (after a compaction Qwen Code edits the first message; the summariser's prompt is a
    // head of its own).
    expect(sides).toHaveLength(both.length);
  });

  it('sent every side ask on the conversation\'s prefix: its system prompt and catalog, the instruction last', () => {
    const upstream = r.world.tap.requests.filter((x) => JSON.stringify(x.body).includes(MARKER));
    expect(upstream).toHaveLength(asks().length);
    const rebuilt = upstream.filter((x) => JSON.stringify((x.body as { messages: { content: unknown }[] }).messages[0]!.content).includes('You are Qwen Code'));
    const sides = r.files.filter((f) => sideOf(f.lines.map((l) => l.event)) !== undefined).length;
    expect(rebuilt).toHaveLength(sides);
    for (const x of rebuilt) {
      const messages = (x.body as { messages: { role: string; content: unknown }[] }).messages;
      expect(JSON.stringify(messages.at(-1)!.content)).toContain(MARKER);
      expect((x.body as { tools?: unknown[] }).tools?.length).toBeGreaterThan(0);
    }
  });

  it('left no log of the agent\'s conversation holding the summariser\'s prompt, or its empty catalog', () => {
    for (const f of r.files) {
      const events = f.lines.map((l) => l.event);
      const system = events.find((e) => e.type === 'client.msg' && e.msg.role === 'system');
      if (sideOf(events) !== undefined || system === undefined || !JSON.stringify(system).includes('You are Qwen Code')) continue;
      expect(events.filter((e) => e.type === 'client.msg' && JSON.stringify(e.msg).includes(MARKER))).toEqual([]);
      expect(events.filter((e) => e.type === 'catalog' && e.tools.length === 0)).toEqual([]);
    }
  });

  it('proxy replay --all passes', async () => {
    const result = await replay(lw!);
    expect(result.code, result.stderr + result.stdout.slice(0, 2000)).toBe(0);
  }, 60_000);
});
