/**
 * A real agent's session in the inspector: the real Claude Code, headless and offline, runs its
 * six-call tool loop through the proxy (Anthropic wire in, the simulator's chat wire out) under
 * the client key; its session page then shows `proxy stats SESSION --json`'s figures, one row per
 * request, each request after the first reading its predecessor's prefix from the cache; and its
 * rebuilt request verifies against its logged digest.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runClaude, workspace } from '../e2e/claude-code-run.js';
import { CLIENT_KEY, figure, newId, sessionList, startUiWorld, statsJson, type UiWorld } from './world.js';

let w: UiWorld;
let id: string;
beforeAll(async () => {
  w = await startUiWorld('agent');
  const before = await sessionList(w.dataDir);
  const home = await mkdtemp(join(tmpdir(), 'pp-ui-cc-home-'));
  const { ws, prompt } = await workspace();
  try {
    const run = await runClaude({ base: w.proxy.url, key: CLIENT_KEY, model: 'm', prompt, ws, home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json?.result).toContain('All six steps are done.');
  } finally {
    await rm(ws, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  }
  id = await newId(w.dataDir, before);
}, 120_000);
afterAll(async () => {
  await w?.close();
});

it('shows the agent\'s session as proxy stats does, every request after the first reading from the cache', async () => {
  const stats = statsJson(w, id);
  expect(stats.requests.length).toBeGreaterThanOrEqual(6);
  await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}`);
  await expect.poll(() => w.page.getByTestId('session-id').textContent()).toBe(id);
  await w.page.getByTestId('requests').waitFor();
  expect(await figure(w.page, 'session-requests')).toBe(stats.session.requests);
  expect(await figure(w.page, 'session-prompt-tokens')).toBe(stats.session.prompt_tokens);
  expect(await figure(w.page, 'session-cache-share')).toBeCloseTo(stats.session.token_cache_rate!, 12);
  expect(await figure(w.page, 'session-cost')).toBeCloseTo(stats.session.cost_usd!, 12);
  const cached = await w.page.getByTestId('request-row').evaluateAll((trs) => trs.map((tr) => Number(tr.querySelector('[data-testid="cached-tokens"]')!.getAttribute('data-value'))));
  expect(cached).toEqual(stats.requests.map((r) => r.cached_tokens));
  expect(cached.slice(1).every((c) => c > 0)).toBe(true);
  // The client is the wire it spoke.
  expect(await w.page.getByText('anthropic-messages').first().isVisible()).toBe(true);
});

it('opens its last request rebuilt from the log, the digest verified', async () => {
  const last = statsJson(w, id).requests.at(-1)!;
  await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}/r/${last.seq}`);
  await w.page.getByTestId('digest-verified').waitFor();
  expect(await w.page.getByTestId('digest-verified').getAttribute('data-value')).toBe('true');
});
