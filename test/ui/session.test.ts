/**
 * The session page against a proxy that served real sessions: its figures are `proxy stats
 * SESSION --json`'s, one bar and one row per request, breaks marked with their cause, the
 * window's elisions on the timeline, a fork and a side request linked to their parent, a new
 * request shown live; axe finds nothing serious; every link and button is reached with Tab.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawnBars, expectAccessible, figure, screenshot, startUiWorld, statsJson, tabThrough, type UiWorld } from './world.js';

let w: UiWorld;
beforeAll(async () => {
  w = await startUiWorld('session');
}, 60_000);
afterAll(async () => {
  await w?.close();
});

async function open(id: string): Promise<void> {
  await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(id)}`);
  // Only the hash changes: the page shows the new id first, then its table once read.
  await expect.poll(() => w.page.getByTestId('session-id').textContent()).toBe(id);
  await w.page.getByTestId('requests').waitFor();
}

describe('a trimmed session', () => {
  it('shows proxy stats\' figures, one bar and one row per request, and each break with its cause', async () => {
    const stats = statsJson(w, w.ids.trimmed);
    await open(w.ids.trimmed);
    const page = w.page;
    expect(await figure(page, 'session-requests')).toBe(stats.session.requests);
    expect(await figure(page, 'session-prompt-tokens')).toBe(stats.session.prompt_tokens);
    expect(await figure(page, 'session-cache-share')).toBeCloseTo(stats.session.token_cache_rate!, 12);
    expect(await figure(page, 'session-cost')).toBeCloseTo(stats.session.cost_usd!, 12);
    expect(await figure(page, 'session-savings')).toBeGreaterThan(0);
    expect(await page.getByTestId('token-chart').getAttribute('data-bars')).toBe(String(stats.requests.length));

    const rows = page.getByTestId('request-row');
    expect(await rows.count()).toBe(stats.requests.length);
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => {
      const v = (id: string) => tr.querySelector(`[data-testid="${id}"]`)!.getAttribute('data-value');
      return { seq: Number(tr.getAttribute('data-seq')), prompt: v('prompt-tokens'), cached: v('cached-tokens'), cause: v('cause'), cost: v('cost') };
    }));
    expect(shown.map((r) => [r.seq, Number(r.prompt), Number(r.cached), r.cause])).toEqual(
      stats.requests.map((r) => [r.seq, r.prompt_tokens, r.cached_tokens, r.cause ?? 'null']));
    shown.forEach((r, i) => expect(Number(r.cost)).toBeCloseTo(stats.requests[i]!.cost_usd!, 12));
    // The last row's running cost is the session's.
    expect(await figure(page, 'cumulative-cost')).toBeCloseTo(stats.session.cost_usd!, 12);

    const breaks = stats.requests.filter((r) => r.cause !== null && r.cause !== 'first' && r.cause !== 'none');
    expect(breaks.some((r) => r.cause === 'trim')).toBe(true);
    const marked = await page.getByTestId('break').evaluateAll((lis) => lis.map((li) => [Number(li.getAttribute('data-seq')), li.getAttribute('data-cause')]));
    expect(marked).toEqual(breaks.map((r) => [r.seq, r.cause]));
    expect(await page.getByTestId('token-chart').getAttribute('data-breaks')).toBe(String(breaks.length));
    // The window's elisions are on the timeline.
    expect(await page.locator('[data-testid="timeline-mark"][data-kind="elide"]').count()).toBeGreaterThan(0);
    await screenshot(page, 'session');
  });

  it('draws every bar whole, the first and last as wide as the rest, each under its request', async () => {
    const stats = statsJson(w, w.ids.trimmed);
    await open(w.ids.trimmed);
    // Read once the chart has drawn (the table can show first).
    await expect.poll(async () => (await drawnBars(w.page, 'token-chart')).runs.length).toBe(stats.requests.length);
    const { plotWidth, runs } = await drawnBars(w.page, 'token-chart');
    const widths = runs.map((r) => r.to - r.from).sort((a, b) => a - b);
    const median = widths[Math.floor(widths.length / 2)]!;
    for (const r of runs) expect(r.to - r.from).toBeGreaterThan(0.9 * median);
    // Evenly spaced, with half a step of room at each end.
    const step = plotWidth / runs.length;
    runs.forEach((r, i) => expect(Math.abs((r.from + r.to) / 2 - (i + 0.5) * step)).toBeLessThan(2));
    // The running cost below has the same x: request N's point sits under its bar.
    const area = (testid: string) => w.page.getByTestId(testid).locator('.u-over').boundingBox();
    const [bars, running] = [await area('token-chart'), await area('running-chart')];
    expect(running!.x).toBeCloseTo(bars!.x, 0);
    expect(running!.width).toBeCloseTo(bars!.width, 0);
  });

  it('pointing at a bar reads its request as proxy stats does; clicking it opens that request', async () => {
    const stats = statsJson(w, w.ids.trimmed);
    await open(w.ids.trimmed);
    await expect.poll(async () => (await drawnBars(w.page, 'token-chart')).runs.length).toBe(stats.requests.length);
    const { runs } = await drawnBars(w.page, 'token-chart');
    const area = (await w.page.getByTestId('token-chart').locator('.u-over').boundingBox())!;
    const readout = w.page.getByTestId('chart-readout');
    const int = (n: number | null) => (n === null ? 'unknown' : n.toLocaleString('en-US'));
    // The first bar, a break, and the last.
    const breakAt = stats.requests.findIndex((r) => r.cause === 'trim');
    for (const i of [0, breakAt, stats.requests.length - 1]) {
      const r = stats.requests[i]!;
      await w.page.mouse.move(area.x + (runs[i]!.from + runs[i]!.to) / 2, area.y + area.height - 3);
      const uncached = r.prompt_tokens! - (r.cached_tokens ?? 0) - (r.cache_write_tokens ?? 0);
      const cause = r.cause !== null && r.cause !== 'none' ? `; cause: ${r.cause.replaceAll('_', ' ')}` : '';
      await expect.poll(() => readout.textContent()).toBe(
        `Request ${i + 1} (seq ${r.seq}): ${int(r.cached_tokens)} read from cache, ${int(r.cache_write_tokens)} written, ${int(uncached)} uncached, ${int(r.completion_tokens)} output${cause}`);
    }
    const r = stats.requests[breakAt]!;
    await w.page.mouse.move(area.x + (runs[breakAt]!.from + runs[breakAt]!.to) / 2, area.y + area.height - 3);
    await w.page.mouse.click(area.x + (runs[breakAt]!.from + runs[breakAt]!.to) / 2, area.y + area.height - 3);
    await expect.poll(() => w.page.url()).toContain(`#/s/${w.ids.trimmed}/r/${r.seq}`);
    await expect.poll(() => w.page.getByTestId('request-seq').textContent()).toBe(`seq ${r.seq}`);
  });

  it('is accessible and every link and button is reached with Tab', async () => {
    await open(w.ids.trimmed);
    await expectAccessible(w.page);
    const reached = await tabThrough(w.page);
    const links = await w.page.locator('a[href], button:not([disabled]), summary').count();
    expect(reached.length).toBe(links);
  });
});

describe('lineage', () => {
  it('a fork and a side request link to their parent, and the parent lists them', async () => {
    await open(w.ids.fork);
    await expect.poll(() => w.page.getByTestId('parent').textContent()).toContain('Forked from');
    await w.page.getByTestId('parent-link').click();
    await w.page.getByTestId('children').waitFor();
    expect(w.page.url()).toContain(`#/s/${w.ids.parent}`);
    expect(await w.page.locator(`[data-testid="child"][data-id="${w.ids.fork}"]`).getAttribute('data-kind')).toBe('fork');

    await open(w.ids.side);
    expect(await w.page.getByTestId('parent').textContent()).toContain('compaction side request');
    await open(w.ids.conversation);
    expect(await w.page.locator(`[data-testid="child"][data-id="${w.ids.side}"]`).getAttribute('data-kind')).toBe('side');
  });
});

describe('live', () => {
  it('a request answered while the page is open appears without a reload', async () => {
    await open(w.ids.rewritten);
    const before = await w.page.getByTestId('request-row').count();
    await expect.poll(() => w.page.getByTestId('live').getAttribute('data-open')).toBe('true');
    await w.page.evaluate(() => { (globalThis as unknown as { marker: number }).marker = 1; });
    await w.extend();
    await expect.poll(() => w.page.getByTestId('request-row').count(), { timeout: 5000 }).toBe(before + 1);
    expect(await w.page.getByTestId('live-count').textContent()).toBe('1');
    expect(await w.page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(1);
    const stats = statsJson(w, w.ids.rewritten);
    expect(stats.session.requests).toBe(before + 1);
    // The quiet re-read that follows brings the totals to proxy stats' own.
    await expect.poll(() => figure(w.page, 'session-prompt-tokens')).toBe(stats.session.prompt_tokens);
  });
});
