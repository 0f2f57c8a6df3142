/**
 * Issue 33, "Must show": qwen-code and opencode (real, headless, offline; the other clients'
 * runs are in test/e2e/claude-code.test.ts, codex.test.ts and wire-fidelity.test.ts) against
 * OpenAI's GPT-5.6 as the simulator plays it, strict about what its reasoning models refuse
 * (docs/wires.md): on the chat wire (openai preset) and on the Responses wire. Six tool steps
 * each: the agent finishes, nothing is refused upstream or to the agent, and no output limit the
 * agent did not send reaches the model.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AGENTS, finished, longSession, startLongWorld, type AgentSpec, type LongWorld } from './long-session.js';

const ROUTES = [
  { name: 'chat', provider: 'op56', upstreamPath: '/gpt56/v1/chat/completions', wire: 'chat' },
  { name: 'responses', provider: 'rs56', upstreamPath: '/gpt56/v1/responses', wire: 'responses' },
] as const;

/** The agent's own spec, its route (same name) sent to GPT-5.6 by `provider` instead. */
function onGpt(base: AgentSpec, route: (typeof ROUTES)[number]): AgentSpec {
  return { ...base, upstreamPath: route.upstreamPath, wire: route.wire, routeToml: `[models.${base.route}]\nprovider = "${route.provider}"\nmodel = "gpt-5.6"\n` };
}

const worlds: LongWorld[] = [];
afterAll(async () => {
  for (const lw of worlds) await lw.close();
});

for (const kind of ['qwen-code', 'opencode'] as const) {
  describe(`${kind} against GPT-5.6`, () => {
    for (const route of ROUTES) {
      it(`on the ${route.name} wire: finishes, nothing refused, no limit added`, async () => {
        const spec = onGpt(AGENTS[kind], route);
        const lw = await startLongWorld(spec);
        worlds.push(lw);
        const r = await longSession(lw, spec, { steps: 6, timeoutMs: 120_000 });
        expect(r.run.code, r.run.stderr.slice(-1500)).toBe(0);
        expect(finished(r)).toBe(true);
        expect(r.figures.refused).toBe(0);
        expect(r.asked.every((a) => a.status === 200), JSON.stringify(r.asked.map((a) => a.status))).toBe(true);
        expect(r.allUpstream.length).toBeGreaterThanOrEqual(7);
        for (const up of r.allUpstream) {
          const body = up.body as Record<string, unknown>;
          expect(body).not.toHaveProperty('max_tokens');
          // Each limit that went upstream is one the agent sent.
          const sent = body.max_completion_tokens ?? body.max_output_tokens;
          if (sent !== undefined) expect(r.asked.some((a) => (a.body as { max_tokens?: unknown }).max_tokens === sent || (a.body as { max_completion_tokens?: unknown }).max_completion_tokens === sent)).toBe(true);
        }
      }, 180_000);
    }
  });
}
