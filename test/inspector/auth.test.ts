/**
 * Who may open the inspector: with `[auth] keys`, only a key marked admin (bearer, or the login
 * cookie), never a foreign Origin; the login form is the one state-changing route and checks the
 * Origin like the API. Without keys, callers on this machine only.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InspectorAccess, inspectorAudience } from '../../src/inspector/access.js';
import { Secret, type ClientKey } from '../../src/config/types.js';
import { conversation, startWorld, type World } from './world.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const ALICE = 'alice-key-0123456789';
const ROOT = 'root-key-0123456789';

let w: World;
let host: string;
beforeAll(async () => {
  w = await startWorld({
    extraToml: `
[auth]
keys = [
  { name = "alice", sha256 = "${sha(ALICE)}" },
  { name = "root", sha256 = "${sha(ROOT)}", admin = true },
]
`,
  });
  host = new URL(w.proxy.url).host;
  const alice = new OpenAI({ baseURL: `${w.proxy.url}/v1`, apiKey: ALICE, maxRetries: 0 });
  await conversation({ ...w, client: alice }, 'keyed', 1);
}, 30_000);
afterAll(async () => {
  await w?.close();
});

const get = (url: string, headers: Record<string, string> = {}) => w.proxy.app.inject({ method: 'GET', url, headers: { host, ...headers } });
const login = (key: string, headers: Record<string, string> = {}) => w.proxy.app.inject({
  method: 'POST', url: '/ui/login', payload: `key=${encodeURIComponent(key)}`,
  headers: { host, 'content-type': 'application/x-www-form-urlencoded', ...headers },
});

describe('with [auth] keys', () => {
  it('no key: 401; a key not marked admin: 403; an admin key: the JSON', async () => {
    const none = await get('/api/sessions');
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('unauthorized');
    const alice = await get('/api/sessions', { authorization: `Bearer ${ALICE}` });
    expect(alice.statusCode).toBe(403);
    expect(alice.json().error.code).toBe('admin_only');
    const root = await get('/api/sessions', { authorization: `Bearer ${ROOT}` });
    expect(root.statusCode).toBe(200);
    // The session's key is the key's name, never the key.
    expect(root.json().items[0].key).toBe('alice');
    expect(root.body).not.toContain(ALICE);
    const overview = await get('/api/overview', { authorization: `Bearer ${ROOT}` });
    expect(overview.json().by_key.map((k: { key: string }) => k.key)).toEqual(['alice']);
  });

  it('a foreign Origin is refused, the proxy\'s own is not', async () => {
    const foreign = await get('/api/sessions', { authorization: `Bearer ${ROOT}`, origin: 'http://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().error.code).toBe('origin_refused');
    const own = await get('/api/sessions', { authorization: `Bearer ${ROOT}`, origin: `http://${host}` });
    expect(own.statusCode).toBe(200);
    // The exemption is the inspector's: the conversation endpoints still refuse it.
    const chat = await w.proxy.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { host, origin: `http://${host}`, 'content-type': 'application/json' }, payload: '{}' });
    expect(chat.statusCode).toBe(403);
  });

  it('/ui/ without credentials is the login form; the form sets a cookie that opens /api/', async () => {
    const page = await get('/ui/');
    expect(page.statusCode).toBe(401);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<form method="post" action="/ui/login"');
    // Its stylesheet is the one file served without a login; the script and the data are not.
    const css = await get('/ui/app.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect((await get('/ui/app.js')).statusCode).toBe(401);
    expect((await get('/ui/index.html')).statusCode).toBe(401);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");

    expect((await login('wrong-key', { origin: `http://${host}` })).statusCode).toBe(401);
    const nonAdmin = await login(ALICE, { origin: `http://${host}` });
    expect(nonAdmin.statusCode).toBe(403);
    expect(nonAdmin.headers['set-cookie']).toBeUndefined();

    const ok = await login(ROOT, { origin: `http://${host}` });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/ui/');
    const cookie = String(ok.headers['set-cookie']);
    expect(cookie).toMatch(/^pp_inspector=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
    expect(cookie).not.toContain(ROOT);
    const pair = cookie.split(';')[0]!;
    expect((await get('/api/sessions', { cookie: pair })).statusCode).toBe(200);
    expect((await get('/ui/', { cookie: pair })).statusCode).not.toBe(401);
    const forged = `${pair.slice(0, -4)}AAAA`;
    expect((await get('/api/sessions', { cookie: forged })).statusCode).toBe(401);
  });

  it('the login form refuses a foreign Origin (CSRF)', async () => {
    const res = await login(ROOT, { origin: 'http://evil.example' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('origin_refused');
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});

describe('InspectorAccess', () => {
  const now = () => 1_000_000;
  it('without keys or an admin key: open to loopback callers only', () => {
    const open = new InspectorAccess({ keys: [], adminKey: undefined, now });
    expect(open.check({ authorization: undefined, cookie: undefined, loopbackCaller: true }).name).toBe('loopback');
    expect(() => open.check({ authorization: undefined, cookie: undefined, loopbackCaller: false })).toThrow(/this machine only/);
  });

  it('the admin key opens it, and its cookie expires', () => {
    let t = 1_000_000;
    const access = new InspectorAccess({ keys: [], adminKey: new Secret('adm'), now: () => t });
    expect(access.check({ authorization: 'Bearer adm', cookie: undefined, loopbackCaller: false }).name).toBe('(admin key)');
    expect(() => access.check({ authorization: undefined, cookie: undefined, loopbackCaller: true })).toThrow(/admin key/);
    const token = access.login('adm');
    expect(access.check({ authorization: undefined, cookie: `a=b; pp_inspector=${token}`, loopbackCaller: false }).name).toBe('(admin key)');
    // Another replica holding the same admin key reads the same cookie.
    const replica = new InspectorAccess({ keys: [], adminKey: new Secret('adm'), now: () => t });
    expect(replica.check({ authorization: undefined, cookie: `pp_inspector=${token}`, loopbackCaller: false }).name).toBe('(admin key)');
    t += 13 * 3_600_000;
    expect(() => access.check({ authorization: undefined, cookie: `pp_inspector=${token}`, loopbackCaller: false })).toThrow();
  });

  it('the banner says who may open it, as check decides', () => {
    const key = (name: string, admin: boolean): ClientKey => ({ name, sha256: sha(name), models: undefined, budgetPeriod: 'day', ...(admin ? { admin: true as const } : {}) });
    const cases = [
      { keys: [], adminKey: undefined, words: 'from this machine' },
      { keys: [], adminKey: new Secret('adm'), words: 'with the admin key' },
      { keys: [key('a', false), key('b', true)], adminKey: new Secret('adm'), words: 'with the admin key or 1 client key(s) marked admin' },
      { keys: [key('a', false)], adminKey: undefined, words: 'closed: no admin key and no client key marked admin' },
    ];
    for (const c of cases) {
      expect(inspectorAudience(c.keys, c.adminKey)).toBe(c.words);
      // Closed means closed: no key check lets anyone in, from this machine or not.
      const access = new InspectorAccess({ keys: c.keys, adminKey: c.adminKey, now });
      const keyOpens = [...c.keys.map((k) => k.name), ...(c.adminKey === undefined ? [] : ['adm'])].some((k) => {
        try { access.check({ authorization: `Bearer ${k}`, cookie: undefined, loopbackCaller: true }); return true; } catch { return false; }
      });
      const opens = access.required ? keyOpens : access.check({ authorization: undefined, cookie: undefined, loopbackCaller: true }).name === 'loopback';
      expect(opens).toBe(!c.words.startsWith('closed'));
    }
  });
});
