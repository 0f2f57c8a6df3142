/**
 * Explicit cache breakpoints on the Anthropic wire (`cache_control_at = "breakpoints"`;
 * docs/decisions.md, Anthropic caches only when asked):
 * markers on the end of the tools, the end of the system prompt and the last user/tool-result
 * boundary, never more than 4, moving forward as the conversation grows; the cache reads each
 * request's predecessor.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventOf } from '../../src/core/events.js';
import { tag } from './harness.js';
import { toolSession } from './wires-client.js';
import { sessionWith, startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.claude-bp]
provider = "an"
model = "claude-sim"
cache_control = "ephemeral"
cache_control_at = "breakpoints"
`,
  });
});
afterAll(async () => w.close());

/** Every `cache_control` marker in an Anthropic request body. */
function markers(body: Record<string, unknown>): number {
  let n = 0;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'cache_control') n++;
        else visit(x);
      }
    }
  };
  visit(body);
  return n;
}

it('places breakpoints instead of a top-level marker, at most 4, and reads the predecessor from the cache', async () => {
  const t = tag('bp');
  const from = w.tap.requests.length;
  const answers = await toolSession(w, 'claude-bp', t, { rounds: 6, resultTokens: 300, systemTokens: 1200 });
  const reqs = wire(w, '/anthropic/', from);
  expect(reqs).toHaveLength(6);
  for (const r of reqs) {
    const body = r.body as Record<string, unknown>;
    expect(body.cache_control).toBeUndefined();
    expect(markers(body)).toBeGreaterThanOrEqual(2);
    expect(markers(body)).toBeLessThanOrEqual(4);
  }
  const cached = answers.map((a) => a.usage?.prompt_tokens_details?.cached_tokens ?? 0);
  expect(cached[0]).toBe(0);
  for (let i = 1; i < answers.length; i++) {
    // Each request reads at least what its predecessor wrote up to its last boundary.
    expect(cached[i]).toBeGreaterThan(answers[i - 1]!.usage!.prompt_tokens * 0.9);
  }
  const events = await sessionWith(w, t);
  const hints = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').map((e) => e.hints);
  expect(hints.every((h) => h?.cache_control === 'ephemeral' && (h.breakpoints ?? 0) >= 2)).toBe(true);
});
