/**
 * Issue 29, "Must show": the real Claude Code (pinned in package.json), headless and offline,
 * through the proxy on the Anthropic wire (the anthropic preset's defaults) for 42 tool steps that
 * each read a ~6 KB file, on a route whose window trims several times (long-session.ts has the
 * workspace, the spawn and the measures).
 *
 * The route's model is one that binds a signed thinking block to its prefix (claude-sonnet-5-5), as
 * the simulator plays every model. A trim edits the prefix of every reply after it, so their blocks
 * are invalid. Left out, the loop's last reply would have none and the request would have to go
 * without thinking (the API's final-thinking-block rule), which invalidates every cached message
 * block (79.5% of the head read at the first trim, and no thinking for the rest of the loop). Kept,
 * with `block_binding.prefix_mismatch_behavior = "drop_block"`, the API drops them itself and
 * thinking goes on (docs/decisions/0009-stale-thinking-dropped-by-the-api.md).
 */
import { expect, it } from 'vitest';
import { longSessionSuite } from './long-session.js';

longSessionSuite('claude-code', {
  more: (run) => {
    it('thinks through every trim: each request asks for thinking with drop_block and its beta; the simulator dropped stale blocks, refused nothing', () => {
      const r = run();
      const bodies = r.upstream.map((x) => x.body as { thinking?: { type?: string; block_binding?: unknown } });
      const thinking = bodies.map((b, i) => `${i}:${b.thinking?.type ?? 'off'}`);
      expect(bodies.every((b) => b.thinking !== undefined && b.thinking.type !== 'disabled'), thinking.join(' ')).toBe(true);
      for (const b of bodies) expect(b.thinking?.block_binding).toStrictEqual({ prefix_mismatch_behavior: 'drop_block' });
      for (const x of r.upstream) expect(String(x.headers['anthropic-beta'] ?? '')).toContain('thinking-binding-controls-2026-08-01');
      // At each trim the blocks of the replies after the elision were stale: the upstream said it dropped them.
      const dropped = r.upstream.map((x) => (x.response.includes('"thinking_dropped"') ? 1 : 0));
      for (const at of r.figures.trims) expect(dropped[at], `trim at request ${at}`).toBe(1);
      // The proxy read that back: the trim's reply in the log says how many it dropped.
      const droppedInLog = (at: number) => r.events.find((e) => e.type === 'llm.resp' && e.req === r.reqs[at]!.seq && e.reply.dropped_blocks !== undefined);
      for (const at of r.figures.trims) expect(droppedInLog(at), `trim at request ${at}`).toBeDefined();
    });
  },
});
