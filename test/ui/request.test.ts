/**
 * The request page: a break opened from its session shows the digest verified, the hints, the
 * rebuilt messages, and the first difference from its predecessor highlighted where it is, with
 * the cause `proxy diff` names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxy as cli } from '../cli/helpers.js';
import { expectAccessible, figure, screenshot, sessionsJson, startUiWorld, statsJson, tabThrough, type UiWorld } from './world.js';

let w: UiWorld;
beforeAll(async () => {
  w = await startUiWorld('request');
}, 60_000);
afterAll(async () => {
  await w?.close();
});

function diffJson(id: string, seq: number): { cause: string; index: number | null; field: string | null } {
  const r = cli(['diff', id, String(seq), '--json', '--data-dir', w.dataDir]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

function readLog(id: string): Record<string, unknown>[] {
  return readFileSync(join(w.dataDir, 'sessions', `${id}.jsonl`), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The request's `llm.req` as the log holds it. */
function requestEvent(id: string, seq: number): Record<string, unknown> {
  const event = readLog(id).find((e) => e.seq === seq);
  expect(event?.type).toBe('llm.req');
  return event!;
}

async function openBreak(id: string, cause: string): Promise<number> {
  await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}`);
  const link = w.page.locator(`[data-testid="break"][data-cause="${cause}"] a`).first();
  const seq = Number(await w.page.locator(`[data-testid="break"][data-cause="${cause}"]`).first().getAttribute('data-seq'));
  await link.click();
  await w.page.getByTestId('digest-verified').waitFor();
  return seq;
}

describe('a break, opened from its session', () => {
  it('a trim: the digest verified, and the first difference at proxy diff\'s field, highlighted', async () => {
    const seq = await openBreak(w.ids.trimmed, 'trim');
    const page = w.page;
    expect(page.url()).toContain(`#/s/${w.ids.trimmed}/r/${seq}`);
    expect(await page.getByTestId('digest-verified').getAttribute('data-value')).toBe('true');
    expect(await page.getByTestId('digest-logged').textContent()).toBe(await page.getByTestId('digest-rebuilt').textContent());
    const diff = diffJson(w.ids.trimmed, seq);
    expect(diff.cause).toBe('trim');
    expect(await page.getByTestId('diff-path').textContent()).toBe(diff.field);
    expect(await page.getByTestId('diff-cause').textContent()).toBe('trim');
    // The highlighted text: what the predecessor had there, and the placeholder that replaced it.
    expect(await page.getByTestId('diff-after').textContent()).toMatch(/elided seq=/);
    // What the predecessor had there: this world's first trim elides an assistant message that
    // held only tool calls, whose content is null. Said in words, not as the JSON `null`.
    const before = page.getByTestId('diff-before');
    expect(await before.getAttribute('data-none')).toBe('true');
    expect(await before.textContent()).toBe('No text: this message held none.');
    expect(await page.getByTestId('diff-after').evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).backgroundColor)).not.toBe('rgba(0, 0, 0, 0)');
    // The message it is in is marked among the rebuilt messages, and open.
    const marked = page.getByTestId('diff-message');
    expect(Number(await marked.getAttribute('data-index'))).toBe(diff.index);
    expect(await marked.locator('details').getAttribute('open')).not.toBeNull();
    // What it cost: proxy stats' row for it, on screen.
    const row = statsJson(w, w.ids.trimmed).requests.find((r) => r.seq === seq)!;
    expect(await figure(page, 'request-prompt-tokens')).toBe(row.prompt_tokens);
    expect(await figure(page, 'request-cached-tokens')).toBe(row.cached_tokens);
    expect(await figure(page, 'request-output-tokens')).toBe(row.completion_tokens);
    expect(await figure(page, 'request-cost')).toBeCloseTo(row.cost_usd!, 12);
    expect(await page.getByTestId('request-cost').textContent()).toMatch(/^\$0\.\d+$/);
    expect(await page.getByTestId('request-status').count()).toBe(0);
    // A trim broke the prefix: most of the prompt was not read from the cache.
    expect(row.cached_tokens!).toBeLessThan(row.prompt_tokens! / 2);
    // The hints in words, each once: what the log's llm.req recorded.
    const logged = requestEvent(w.ids.trimmed, seq).hints as { session_key?: boolean; headers?: string[] };
    expect(logged.session_key).toBe(true);
    expect(logged.headers!.length).toBeGreaterThan(0);
    const hints = page.getByTestId('hint');
    expect(await hints.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')))).toEqual(['session_key', 'headers']);
    expect(await page.locator('[data-testid="hint"][data-key="session_key"] dt').textContent()).toBe('prompt_cache_key');
    expect(await page.locator('[data-testid="hint"][data-key="headers"] dd code').allTextContents()).toEqual(logged.headers);
    await screenshot(page, 'request');
  });

  it('a call the upstream refused: its page says so, with the error proxy stats gives', async () => {
    const before = new Set(sessionsJson(w).sessions.map((s) => s.id));
    await expect(w.client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'a request the upstream refuses [[error 400]]' }] })).rejects.toThrow();
    const id = sessionsJson(w).sessions.map((s) => s.id).find((s) => !before.has(s))!;
    const row = statsJson(w, id).requests[0]!;
    expect(row.status).toBe('error');
    await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}/r/${row.seq}`);
    const status = w.page.getByTestId('request-status');
    await expect.poll(() => status.getAttribute('data-value')).toBe('error');
    // The upstream's status and its own words, from the log's llm.error.
    const error = readLog(id).find((e) => e.type === 'llm.error')!;
    const said = (JSON.parse(error.body as string) as { error: { message: string } }).error.message;
    expect(said).toContain('[[error 400]]');
    expect(await status.textContent()).toBe(`The call failed: the upstream answered ${row.error}. It said: ${said}`);
    expect(await figure(w.page, 'request-cost')).toBeNull();
  });

  it('a client rewrite: the edited message, with its cause', async () => {
    const seq = await openBreak(w.ids.rewritten, 'client_rewrite');
    const diff = diffJson(w.ids.rewritten, seq);
    expect(diff.cause).toBe('client_rewrite');
    expect(await w.page.getByTestId('diff-cause').textContent()).toBe('client rewrite');
    expect(await w.page.getByTestId('diff-path').textContent()).toBe(diff.field);
    expect(await w.page.getByTestId('diff-after').textContent()).toContain('said again another way');
    expect(Number(await w.page.getByTestId('diff-message').getAttribute('data-index'))).toBe(diff.index);
  });

  it('a session\'s first request has no difference; each request links back to its session', async () => {
    const first = statsJson(w, w.ids.parent).requests[0]!;
    await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(w.ids.parent)}/r/${first.seq}`);
    await w.page.getByTestId('diff-none').waitFor();
    await w.page.getByTestId('session-link').click();
    await w.page.getByTestId('requests').waitFor();
    expect(await w.page.getByTestId('request-row').count()).toBe(statsJson(w, w.ids.parent).requests.length);
  });

  it('is accessible and every link, button and folded message is reached with Tab', async () => {
    await openBreak(w.ids.trimmed, 'trim');
    await expectAccessible(w.page);
    const reached = await tabThrough(w.page);
    expect(reached.length).toBe(await w.page.locator('a[href], button:not([disabled]), summary').count());
  });
});
