/**
 * Who may open the inspector, seen from the browser: without a login the page is the login form;
 * a client key that is not an admin's is refused; a page on another origin cannot read the API.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_KEY, CLIENT_KEY, expectAccessible, logIn, screenshot, startUiWorld, type UiWorld } from './world.js';

let w: UiWorld;
beforeAll(async () => {
  w = await startUiWorld('access');
}, 60_000);
afterAll(async () => {
  await w?.close();
});

it('without a login the page is the login form; a client key that is no admin\'s is refused', async () => {
  const fresh = await w.browser.newContext();
  try {
    const page = await fresh.newPage();
    await page.goto(`${w.proxy.url}/ui/`);
    await page.getByLabel('Admin key').waitFor();
    // Drawn with the page's own stylesheet: its font and header, not the browser's defaults.
    expect(await page.evaluate('getComputedStyle(document.body).fontFamily')).toContain('system-ui');
    expect(await page.locator('header.top .brand').textContent()).toBe('prefix-proxy inspector');
    await expectAccessible(page);
    await screenshot(page, 'login');
    expect(await logIn(fresh, w.proxy.url, CLIENT_KEY)).toBe(403);
    // The form itself, as a person submits it: Chromium sends the page's own Origin, which is let through.
    await page.getByLabel('Admin key').fill(CLIENT_KEY);
    await page.getByLabel('Admin key').press('Enter');
    await page.waitForLoadState();
    expect(await page.content()).toContain('admin');
    await page.getByLabel('Admin key').fill(ADMIN_KEY);
    await Promise.all([page.waitForURL(`${w.proxy.url}/ui/`), page.getByLabel('Admin key').press('Enter')]);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    expect((await fresh.request.get(`${w.proxy.url}/api/overview`)).status()).toBe(200);
    await fresh.clearCookies();
    expect((await fresh.request.get(`${w.proxy.url}/api/overview`)).status()).toBe(401);
    expect((await fresh.request.get(`${w.proxy.url}/api/sessions`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } })).status()).toBe(403);
    expect((await fresh.request.get(`${w.proxy.url}/api/sessions`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status()).toBe(200);
  } finally {
    await fresh.close();
  }
});

it('a page on another origin cannot read the API, even with the admin\'s cookie', async () => {
  // The logged-in browser, asked by another origin's script: the request carries that Origin.
  const foreign = await w.context.request.get(`${w.proxy.url}/api/overview`, { headers: { origin: 'http://evil.example' } });
  expect(foreign.status()).toBe(403);
  expect(await foreign.text()).not.toContain('"totals"');
  const own = await w.context.request.get(`${w.proxy.url}/api/overview`, { headers: { origin: w.proxy.url } });
  expect(own.status()).toBe(200);
});
