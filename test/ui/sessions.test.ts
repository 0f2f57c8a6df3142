/**
 * The sessions list against a proxy that served real sessions: one row per session of `proxy
 * sessions --json` with its figures; sorted by clicking a header (a button); filtered by model,
 * key and id text; a page at a time; each row links to its session. A session idle past
 * `[sessions] locate_days` is marked as no longer continued, in the list and on its page.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, screenshot, sessionsJson, startUiWorld, tabThrough, type UiWorld } from './world.js';

let w: UiWorld;
beforeAll(async () => {
  w = await startUiWorld('sessions');
}, 60_000);
afterAll(async () => {
  await w?.close();
});

async function open(query = ''): Promise<void> {
  await w.page.goto(`${w.proxy.url}/ui/#/sessions${query}`);
  await w.page.getByTestId('sessions').waitFor();
}

/** The list loaded afresh. */
async function reopen(): Promise<void> {
  await open();
  await w.page.reload();
  await w.page.getByTestId('sessions').waitFor();
}

async function rows() {
  return w.page.getByTestId('session-row').evaluateAll((trs) => trs.map((tr) => {
    const v = (id: string) => tr.querySelector(`[data-testid="${id}"]`)!.getAttribute('data-value');
    return { id: tr.getAttribute('data-id')!, requests: Number(v('requests')), prompt: Number(v('prompt-tokens')), share: v('cache-share'), cost: v('cost'), last: v('last-active') };
  }));
}

describe('the sessions list', () => {
  it('has proxy sessions\' rows and figures, most recently active first', async () => {
    const { sessions } = sessionsJson(w);
    await open();
    const shown = await rows();
    expect(shown.map((r) => r.id)).toEqual(sessions.map((s) => s.id));
    for (const [i, s] of sessions.entries()) {
      const r = shown[i]!;
      expect([r.requests, r.prompt]).toEqual([s.requests, s.prompt_tokens]);
      expect(Number(r.share)).toBeCloseTo(s.token_cache_rate!, 12);
      expect(Number(r.cost)).toBeCloseTo(s.cost_usd!, 12);
      expect(r.last).toBe(s.last_active);
    }
    expect(await w.page.getByTestId('page-range').textContent()).toBe(`1–${sessions.length} of ${sessions.length}`);
    await screenshot(w.page, 'sessions');
  });

  it('sorts by a header, from the keyboard', async () => {
    await open();
    await w.page.getByTestId('sort-requests').focus();
    await w.page.keyboard.press('Enter');
    await expect.poll(() => w.page.url()).toContain('sort=requests');
    await expect.poll(async () => (await rows()).map((r) => r.requests)).toEqual(sessionsJson(w).sessions.map((s) => s.requests).sort((a, b) => b - a));
    expect(await w.page.locator('th:has([data-testid="sort-requests"])').getAttribute('aria-sort')).toBe('descending');
    await w.page.getByTestId('sort-requests').press('Enter');
    await expect.poll(() => w.page.url()).toContain('dir=asc');
    await expect.poll(async () => (await rows()).map((r) => r.requests)).toEqual(sessionsJson(w).sessions.map((s) => s.requests).sort((a, b) => a - b));
  });

  it('filters by model, key and id text, and pages', async () => {
    const { sessions } = sessionsJson(w);
    await open();
    await w.page.getByTestId('filter-model').fill('tight');
    await w.page.getByTestId('filter-apply').click();
    await expect.poll(async () => (await rows()).map((r) => r.id)).toEqual([w.ids.trimmed]);
    await w.page.getByTestId('filter-model').fill('');
    await w.page.getByTestId('filter-key').fill('nobody');
    await w.page.getByTestId('filter-key').press('Enter');
    await expect.poll(async () => (await rows()).length).toBe(0);
    // Each open changes only the hash: the table is read again once the new answer is shown.
    await open(`?q=${encodeURIComponent(w.ids.fork.slice(-8))}`);
    await expect.poll(async () => (await rows()).map((r) => r.id)).toEqual([w.ids.fork]);
    await open('?key=dev');
    await expect.poll(async () => (await rows()).length).toBe(sessions.length);

    // Pages: the API's own page size is 50; the page asks for it and follows offset in the URL.
    await open(`?offset=${sessions.length - 1}`);
    await expect.poll(async () => (await rows()).length).toBe(1);
    expect(await w.page.getByTestId('page-next').isDisabled()).toBe(true);
    await w.page.getByTestId('page-prev').click();
    await expect.poll(async () => (await rows()).length).toBe(sessions.length);
  });

  it('a row links to its session', async () => {
    await open();
    await w.page.locator(`[data-testid="session-row"][data-id="${w.ids.side}"] [data-testid="session-link"]`).click();
    // The list has request counts of its own (testid "requests"): wait for the session's page first.
    await expect.poll(() => w.page.getByTestId('session-id').textContent()).toBe(w.ids.side);
    await w.page.getByTestId('requests').waitFor();
  });

  it('marks a session idle past locate_days as no longer continued, in the list and on its page', async () => {
    // A served session's log, its times moved forty days back, under an id of its own.
    const old = '20261001T000000Z-0ld0ld01';
    const shift = 40 * 86_400_000;
    const lines = readFileSync(join(w.dataDir, 'sessions', `${w.ids.conversation}.jsonl`), 'utf8').trimEnd().split('\n').map((l) => {
      const e = JSON.parse(l) as { ts: string };
      return JSON.stringify({ ...e, ts: new Date(Date.parse(e.ts) - shift).toISOString() });
    });
    writeFileSync(join(w.dataDir, 'sessions', `${old}.jsonl`), `${lines.join('\n')}\n`);
    const item = sessionsJson(w).sessions.find((s) => s.id === old)!;
    type Listed = { items: { id: string; last_active: string; continued_until: string | null }[] };
    const listed = async () => (await (await w.page.request.get(`${w.proxy.url}/api/sessions?limit=500`)).json()) as Listed;
    // The inspector looks for new logs every two seconds.
    await expect.poll(async () => (await listed()).items.some((i) => i.id === old), { timeout: 10_000 }).toBe(true);

    await open();
    const marked = w.page.locator('[data-testid="session-row"]:has([data-testid="not-continued"])');
    await expect.poll(() => marked.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')))).toEqual([old]);
    await screenshot(w.page, 'sessions-not-continued');
    const api = await listed();
    const byId = new Map(api.items.map((i) => [i.id, i]));
    expect(byId.get(old)!.continued_until).toBe(new Date(Date.parse(item.last_active!) + 30 * 86_400_000).toISOString());
    // Every other conversation is continued for thirty days from its last activity; a side request never is.
    for (const i of api.items.filter((x) => x.id !== old)) {
      if (i.id === w.ids.side) expect(i.continued_until).toBeNull();
      else expect(Date.parse(i.continued_until!)).toBeGreaterThan(Date.now());
    }

    await w.page.locator(`[data-testid="session-row"][data-id="${old}"] [data-testid="session-link"]`).click();
    await expect.poll(() => w.page.getByTestId('session-id').textContent()).toBe(old);
    await expect.poll(() => w.page.getByTestId('not-continued').textContent()).toContain('a request that');
    await w.page.getByTestId('requests').waitFor();
    await screenshot(w.page, 'session-not-continued');
    await w.page.goto(`${w.proxy.url}/ui/#/s/${encodeURIComponent(w.ids.fork)}`);
    await expect.poll(() => w.page.getByTestId('session-id').textContent()).toBe(w.ids.fork);
    await w.page.getByTestId('requests').waitFor();
    expect(await w.page.getByTestId('not-continued').count()).toBe(0);
  });

  it('names a session whose log cannot be read, with the error proxy sessions prints, on the list and the overview', async () => {
    // A served session's log under an id of its own, its second line cut short.
    const damaged = '20261207T000000Z-damaged1';
    const file = join(w.dataDir, 'sessions', `${damaged}.jsonl`);
    const lines = readFileSync(join(w.dataDir, 'sessions', `${w.ids.conversation}.jsonl`), 'utf8').split('\n');
    lines[1] = lines[1]!.slice(0, 40);
    writeFileSync(file, lines.join('\n'));
    try {
      const cli = sessionsJson(w).unreadable;
      expect(cli.map((u) => u.id)).toEqual([damaged]);
      // The inspector looks for new logs every two seconds: the list is read again until it has it.
      const notice = w.page.getByTestId('unreadable');
      await expect.poll(async () => (await reopen(), notice.count()), { timeout: 10_000 }).toBe(1);
      expect(await notice.getByRole('heading').textContent()).toBe("1 session's log cannot be read");
      const item = w.page.getByTestId('unreadable-session');
      expect(await item.getAttribute('data-id')).toBe(damaged);
      expect(await item.textContent()).toBe(`${damaged}: ${cli[0]!.error}`);
      // Not a row of the table, whose count is proxy sessions' readable ones.
      expect(await w.page.locator(`[data-testid="session-row"][data-id="${damaged}"]`).count()).toBe(0);
      expect(Number(await w.page.getByTestId('sessions').getAttribute('data-total'))).toBe(sessionsJson(w).sessions.length);
      await expectAccessible(w.page);
      await screenshot(w.page, 'sessions-unreadable');

      // Its page says why, naming the file and the line.
      await item.getByRole('link').click();
      await expect.poll(() => w.page.getByTestId('error').textContent()).toContain(`${damaged}.jsonl:2:`);

      await w.page.goto(`${w.proxy.url}/ui/#/?period=all`);
      await expect.poll(() => w.page.getByTestId('overview-unreadable').getAttribute('data-value')).toBe('1');
    } finally {
      rmSync(file);
    }
    await expect.poll(async () => (await reopen(), w.page.getByTestId('unreadable').count()), { timeout: 10_000 }).toBe(0);
  });

  it('is accessible and every link and button is reached with Tab', async () => {
    await open();
    await expectAccessible(w.page);
    const reached = await tabThrough(w.page);
    expect(reached.length).toBe(await w.page.locator('a[href], button:not([disabled]), input, select').count());
  });
});
