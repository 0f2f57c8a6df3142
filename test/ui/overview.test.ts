/**
 * The overview against a proxy that served real sessions: its totals are the sum of `proxy
 * sessions --json`, its breaks by cause are the requests' causes in `proxy stats --json`, each
 * route's and key's row adds up, and a request answered while it is open shows without a reload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxy as cli } from '../cli/helpers.js';
import { drawnBars, expectAccessible, figure, screenshot, sessionsJson, startUiWorld, statsJson, tabThrough, type UiWorld } from './world.js';

let w: UiWorld;
beforeAll(async () => {
  w = await startUiWorld('overview');
}, 60_000);
afterAll(async () => {
  await w?.close();
});

const sum = (xs: (number | null)[]) => xs.reduce<number>((a, b) => a + (b ?? 0), 0);

async function open(period = 'all'): Promise<void> {
  await w.page.goto(`${w.proxy.url}/ui/#/?period=${period}`);
  await w.page.getByTestId('overview-requests').waitFor();
}

describe('the overview', () => {
  it('totals, breaks by cause and the per-route and per-key rows are the CLI\'s figures', async () => {
    const { sessions } = sessionsJson(w);
    await open();
    const page = w.page;
    const prompt = sum(sessions.map((s) => s.prompt_tokens));
    const cached = sum(sessions.map((s) => s.cached_tokens));
    const cost = sum(sessions.map((s) => s.cost_usd));
    expect(await figure(page, 'overview-requests')).toBe(sum(sessions.map((s) => s.requests)));
    expect(await figure(page, 'overview-prompt-tokens')).toBe(prompt);
    expect(await figure(page, 'overview-cache-share')).toBeCloseTo(cached / prompt, 12);
    expect(await figure(page, 'overview-cost')).toBeCloseTo(cost, 12);
    expect(await page.getByTestId('overview-cost').textContent()).toMatch(/^\$0\.0\d+$/);
    expect(await figure(page, 'overview-savings')).toBeGreaterThan(0);

    // Breaks by cause: every request's cause in proxy stats, the first and unchanged ones left out.
    const causes = new Map<string, number>();
    for (const s of sessions) {
      for (const r of statsJson(w, s.id).requests) {
        if (r.cause !== null && r.cause !== 'first' && r.cause !== 'none') causes.set(r.cause, (causes.get(r.cause) ?? 0) + 1);
      }
    }
    expect(causes.get('trim')).toBeGreaterThan(0);
    expect(causes.get('client_rewrite')).toBe(1);
    const shown = await page.getByTestId('cause-row').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-cause'), Number(r.getAttribute('data-value'))] as const));
    expect(new Map(shown)).toEqual(causes);

    // Per route: the tight route is the trimmed agent's; m is every other session's.
    const byRoute = async (name: string, testid: string) => {
      const v = await page.locator(`[data-testid="by-route-row"][data-name="${name}"] [data-testid="${testid}"]`).getAttribute('data-value');
      return Number(v);
    };
    const tight = sessions.filter((s) => s.models.includes('tight'));
    expect(await byRoute('tight', 'requests')).toBe(sum(tight.map((s) => s.requests)));
    expect(await byRoute('m', 'requests')).toBe(sum(sessions.filter((s) => s.models.includes('m')).map((s) => s.requests)));
    expect(await byRoute('tight', 'prompt-tokens')).toBe(sum(tight.map((s) => s.prompt_tokens)));
    // Every request came with the client key "dev".
    expect(Number(await page.locator('[data-testid="by-key-row"][data-name="dev"] [data-testid="requests"]').getAttribute('data-value'))).toBe(sum(sessions.map((s) => s.requests)));
    expect(Number(await page.getByTestId('overview-series').getAttribute('data-points'))).toBeGreaterThan(0);
    await screenshot(page, 'overview');
  });

  it('draws bars over the busy intervals and nothing over the idle ones', async () => {
    await open();
    const requests = await w.page.getByTestId('series-table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Number(tr.children[1]!.textContent!.replace(/,/g, ''))));
    const last = requests.findLastIndex((n) => n > 0);
    // The test's sessions all ran in the period's first seconds; the period runs until now.
    expect(last).toBeLessThan(requests.length - 1);
    // Along the plot's bottom rows, right of the last busy interval's bar: nothing but the faint grid
    // (read once the chart has drawn its bars). Two rows: the lowest is the bars' last row or the
    // axis line, as the plot's height rounds (a run whose every request fell in the first interval
    // had its bar one row up, and none was found).
    const drawn = async () => {
      const [low, up] = [await drawnBars(w.page, 'overview-series', 0.5, 60), await drawnBars(w.page, 'overview-series', 2, 60)];
      return { plotWidth: low.plotWidth, runs: [...low.runs, ...up.runs] };
    };
    await expect.poll(async () => (await drawn()).runs.length).toBeGreaterThan(0);
    const { plotWidth, runs } = await drawn();
    const idleFrom = ((last + 1) / requests.length) * plotWidth;
    expect(runs.filter((r) => r.to > idleFrom + 1)).toEqual([]);
  });

  it('each key\'s budget and what it spent today are proxy keys list\'s', async () => {
    const r = cli(['keys', 'list', '--json', '--config', w.configFile]);
    expect(r.code, r.stderr).toBe(0);
    const listed = (JSON.parse(r.stdout) as { keys: { name: string; spent: number; budgetUsd?: number }[] }).keys;
    const dev = listed.find((k) => k.name === 'dev')!;
    expect(dev.budgetUsd).toBe(10);
    expect(dev.spent).toBeGreaterThan(0);
    await open();
    // Only keys with a budget or a rate: the admin key has neither.
    expect(await w.page.getByTestId('budget-row').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-key')))).toEqual(['dev']);
    const spent = w.page.locator('[data-testid="budget-row"][data-key="dev"] [data-testid="budget-spent"]');
    expect(Number(await spent.getAttribute('data-value'))).toBeCloseTo(dev.spent, 12);
    expect(await spent.textContent()).toMatch(/^\$0\.\d+ \(\d+\.\d%\)$/);
    expect(await w.page.locator('[data-testid="budget-row"][data-key="dev"]').textContent()).toContain('$10.00 a day (UTC)');
  });

  it('pointing at an interval reads its cost and cache share as the table beside the chart gives them', async () => {
    await open();
    const table = await w.page.getByTestId('series-table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent!)));
    // The dearest interval.
    const dollars = (text: string) => (text.startsWith('$') ? Number(text.slice(1)) : -1);
    const at = table.reduce((best, row, i) => (dollars(row[2]!) > dollars(table[best]![2]!) ? i : best), 0);
    expect(dollars(table[at]![2]!)).toBeGreaterThan(0);
    const area = (await w.page.getByTestId('overview-series').locator('.u-over').boundingBox())!;
    await w.page.mouse.move(area.x + ((at + 0.5) / table.length) * area.width, area.y + area.height - 2);
    const value = (n: number) => w.page.getByTestId('overview-series').locator(`.u-legend .u-series:nth-child(${n}) .u-value`).textContent();
    await expect.poll(() => value(2)).toBe(table[at]![2]);
    expect(await value(3)).toBe(table[at]![3]);
  });

  it('a cause opens the sessions that broke for it: proxy stats\' sessions with such a request', async () => {
    const { sessions } = sessionsJson(w);
    const trimmed = sessions.filter((s) => statsJson(w, s.id).requests.some((r) => r.cause === 'trim')).map((s) => s.id).sort();
    expect(trimmed.length).toBeGreaterThan(0);
    expect(trimmed.length).toBeLessThan(sessions.length);
    await open();
    await w.page.locator('[data-testid="cause-row"][data-cause="trim"] [data-testid="cause-sessions"]').click();
    await expect.poll(() => w.page.url()).toContain('#/sessions?cause=trim');
    await w.page.getByTestId('sessions').waitFor();
    expect(await w.page.getByTestId('filter-cause').inputValue()).toBe('trim');
    const shown = await w.page.getByTestId('session-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')!));
    expect(shown.sort()).toEqual(trimmed);
    // Any cause again: every session.
    await w.page.getByTestId('filter-cause').selectOption('');
    await expect.poll(() => w.page.getByTestId('session-row').count()).toBe(sessions.length);
  });

  it('the period picker: a link per period, the one shown marked current', async () => {
    await open('1h');
    expect(await w.page.getByTestId('period-1h').getAttribute('aria-current')).toBe('page');
    await w.page.getByTestId('period-7d').click();
    await expect.poll(() => w.page.getByTestId('period-7d').getAttribute('aria-current')).toBe('page');
    expect(w.page.url()).toContain('period=7d');
    expect(await figure(w.page, 'overview-requests')).toBe(sum(sessionsJson(w).sessions.map((s) => s.requests)));
  });

  it('a request answered while it is open shows without a reload', async () => {
    await open();
    const before = await figure(w.page, 'overview-requests');
    await expect.poll(() => w.page.getByTestId('live').getAttribute('data-open')).toBe('true');
    await w.extend();
    await expect.poll(() => figure(w.page, 'overview-requests'), { timeout: 5000 }).toBe(before! + 1);
    expect(await w.page.getByTestId('live-count').textContent()).toBe('1');
  });

  it('is accessible and every link and button is reached with Tab', async () => {
    await open();
    await expectAccessible(w.page);
    const reached = await tabThrough(w.page);
    expect(reached.length).toBe(await w.page.locator('a[href], button:not([disabled]), summary').count());
  });
});
