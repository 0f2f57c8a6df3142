import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import { FileStore } from '../../src/store/files.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { buildApp } from '../../src/proxy/app.js';
import { ImageStore } from '../../src/proxy/images.js';
import { Upstreams } from '../../src/proxy/upstream.js';
import { SessionManager } from '../../src/session/manager.js';

const dir = mkdtempSync(join(tmpdir(), 'pp-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('with no model configured, /v1/models names the built-in simulator', async () => {
  const config = withSimulator(loadConfig({ env: {}, cwd: dir, overrides: { dataDir: dir } }), 'http://127.0.0.1:9/v1');
  const sessions = new SessionManager(new FileStore(config.dataDir), { now: () => new Date() });
  await sessions.init();
  const app = buildApp({ config, sessions, upstreams: new Upstreams(), images: new ImageStore(dir), metrics: createMetrics({ defaults: false }), now: () => new Date() });
  const res = await app.inject({ method: 'GET', url: '/v1/models' });
  expect(res.json()).toEqual({ object: 'list', data: [{ id: 'sim/sim', object: 'model', created: 0, owned_by: 'sim' }] });
  await app.close();
  await sessions.close();
});
