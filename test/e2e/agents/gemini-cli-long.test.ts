/**
 * The real Gemini CLI (pinned in package.json), headless and offline, through the proxy on the
 * native Gemini API for 42 tool steps that each read a ~6 KB file, on a route whose window trims
 * several times (long-session.ts has the workspace, the spawn and the measures). The simulator's
 * Gemini API is strict about thought signatures: each must come back on the part that carried it.
 */
import { expect, it } from 'vitest';
import { sseData } from '../wires-world.js';
import { longSessionSuite } from './long-session.js';

longSessionSuite('gemini-cli', {
  more(run) {
    it('past 30 turns asks another model whether it is looping, in JSON mode: answered, each a session apart from the conversation', () => {
      const r = run();
      const checks = r.world.tap.requests.filter((x) => x.path.startsWith('/v1beta/models/gemini-3-flash-preview:'));
      expect(checks.length).toBeGreaterThanOrEqual(1);
      for (const c of checks) {
        expect((c.body as { generationConfig?: { responseMimeType?: string } }).generationConfig?.responseMimeType).toBe('application/json');
        const text = sseData(c.response).flatMap((p) => (p.candidates as { content?: { parts?: { text?: string; thought?: boolean }[] } }[] | undefined) ?? [])
          .flatMap((cand) => cand.content?.parts ?? []).filter((p) => p.thought !== true).map((p) => p.text ?? '').join('');
        expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(['unproductive_state_analysis', 'unproductive_state_confidence']);
      }
      expect(r.files).toHaveLength(1 + checks.length);
      expect(r.reqs).toHaveLength(r.upstream.length);
    });
  },
});
