/**
 * The page's files under /ui/: content types, the security headers, revalidation, a clear 404
 * when the page was not built, /ui redirected to /ui/, nothing outside the folder.
 */
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { LiveFeed } from '../../src/inspector/live.js';
import { inspectorPlugin } from '../../src/inspector/routes.js';
import { FileStore } from '../../src/store/files.js';

let built: FastifyInstance;
let unbuilt: FastifyInstance;

async function appWith(uiDir: string, dir: string): Promise<FastifyInstance> {
  await writeFile(join(dir, 'config.toml'), `data_dir = ${JSON.stringify(join(dir, 'data'))}\n`);
  const config = loadConfig({ path: join(dir, 'config.toml'), env: {}, cwd: dir });
  const app = Fastify();
  await app.register(inspectorPlugin, { config, store: new FileStore(config.dataDir), live: new LiveFeed({ pollMs: 0, heartbeatMs: 0 }), now: () => new Date(), uiDir });
  return app;
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pp-ui-'));
  const ui = join(dir, 'ui');
  await mkdir(ui);
  await writeFile(join(ui, 'index.html'), '<!doctype html><title>inspector</title><script src="app.js"></script>');
  await writeFile(join(ui, 'app.js'), 'console.log(1);');
  await writeFile(join(ui, 'app.css'), 'body{}');
  await writeFile(join(dir, 'secret.txt'), 'outside');
  built = await appWith(ui, dir);
  unbuilt = await appWith(join(dir, 'nothing'), await mkdtemp(join(tmpdir(), 'pp-ui-')));
});
afterAll(async () => {
  await built?.close();
  await unbuilt?.close();
});

describe('GET /ui/', () => {
  it('serves the build with its type and the security headers', async () => {
    for (const [url, type] of [['/ui/', 'text/html'], ['/ui/app.js', 'text/javascript'], ['/ui/app.css', 'text/css'], ['/ui/sessions/abc', 'text/html']] as const) {
      const res = await built.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(new RegExp(`^${type}`));
      expect(res.headers['content-security-policy']).toMatch(/^default-src 'self'/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('answers 304 to a current ETag', async () => {
    const first = await built.inject({ method: 'GET', url: '/ui/app.js' });
    const again = await built.inject({ method: 'GET', url: '/ui/app.js', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('redirects /ui to /ui/, and keeps to its folder', async () => {
    const res = await built.inject({ method: 'GET', url: '/ui' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/ui/');
    for (const url of ['/ui/../secret.txt', '/ui/%2e%2e/secret.txt', '/ui/missing.js']) {
      const r = await built.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(404);
      expect(r.body).not.toContain('outside');
    }
  });

  it('says the page was not built when dist/ui is missing', async () => {
    const res = await unbuilt.inject({ method: 'GET', url: '/ui/' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toMatch(/not built/);
  });
});
