/**
 * Images in the store (issue 31, item 2; docs/scaling.md, Images): with the PostgreSQL store an
 * image a client sends is a row of `blobs` under its SHA-256, written once, and no file in the
 * replica's data dir. A replica with its own empty data dir carries on a conversation another
 * replica began with an image, the client naming only the previous response
 * (`previous_response_id`): the image comes from the database, and goes upstream as it was sent.
 * `proxy migrate` takes the images with the logs, both ways, and fails on one it cannot find.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { usePgWorld } from './pg-world.js';
import { runCli } from './harness.js';
import { replicaConfig } from './replica-procs.js';

const pgw = usePgWorld('pp-images-pg-');
/** The bodies the proxies sent upstream, in order (a pass-through in front of the simulator). */
const upstream: string[] = [];
let tap: ReturnType<typeof createServer>;
let tapUrl: string;

beforeAll(async () => {
  const target = pgw.sim.urlFor('openai').replace(/\/$/, '');
  tap = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST') upstream.push(body.toString());
      void fetch(`${target}${(req.url ?? '').replace(/^\/v1/, '')}`, {
        method: req.method ?? 'GET', headers: { 'content-type': 'application/json' }, ...(req.method === 'POST' ? { body } : {}),
      }).then(async (up) => {
        res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await up.arrayBuffer()));
      }, () => res.destroy());
    });
  });
  await new Promise<void>((r) => tap.listen(0, '127.0.0.1', r));
  tapUrl = `http://127.0.0.1:${(tap.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  await new Promise((r) => tap?.close(r));
});

/** A PNG header (enough for the size; the pixels are not inspected). */
function png(width: number, height: number, salt: string): Buffer {
  const head = Buffer.alloc(33);
  head.writeUInt32BE(0x89504e47, 0);
  head.writeUInt32BE(0x0d0a1a0a, 4);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'latin1');
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  return Buffer.concat([head, Buffer.from(salt)]);
}

async function post(proxy: RunningProxy, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json() as Record<string, unknown>;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

describe('images in the PostgreSQL store', () => {
  it('are written once in the database, and a replica reads an image another replica stored', async () => {
    const env = 'PP_TEST_IMAGES_DB';
    process.env[env] = await pgw.server.createDatabase('images');
    const proxies: RunningProxy[] = [];
    const bytes = png(1024, 768, `pixels ${Date.now()}`);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const url = `data:image/png;base64,${bytes.toString('base64')}`;
    const db = new pg.Client({ connectionString: process.env[env] });
    try {
      for (const name of ['ia', 'ib']) {
        const path = await replicaConfig(pgw.dir, name, 0, env, `${tapUrl}/v1`);
        proxies.push(await startProxy(loadConfig({ path, env: process.env, cwd: pgw.dir })));
      }
      const [a, b] = proxies as [RunningProxy, RunningProxy];
      const first = await post(a, '/v1/responses', {
        model: 'oa', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is in this picture? [[say a chart]]' }, { type: 'input_image', image_url: url }] }],
      });
      expect(upstream.at(-1)).toContain(bytes.toString('base64'));

      await db.connect();
      const rows = (await db.query<{ sha256: string; bytes: Buffer }>('SELECT sha256, bytes FROM blobs')).rows;
      expect(rows.map((r) => r.sha256)).toEqual([sha256]);
      expect(rows[0]!.bytes.equals(bytes)).toBe(true);
      expect(existsSync(join(pgw.dir, 'ia', 'blobs'))).toBe(false);

      // The other replica, its data dir empty, answers a follow-up that names only the previous response.
      const before = upstream.length;
      await post(b, '/v1/responses', { model: 'oa', previous_response_id: first.id, input: 'And its title? [[say Sales by month]]' });
      expect(upstream.length).toBe(before + 1);
      const sent = JSON.parse(upstream.at(-1)!) as { messages: { role: string; content: unknown }[] };
      expect(JSON.stringify(sent.messages)).toContain(url);
      expect(JSON.stringify(sent.messages)).toContain('And its title?');
      expect(existsSync(join(pgw.dir, 'ib', 'blobs'))).toBe(false);

      // Sent again to either replica, in a new conversation: still one row.
      await post(b, '/v1/chat/completions', { model: 'oa', messages: [{ role: 'user', content: [{ type: 'text', text: 'Again. [[say again]]' }, { type: 'image_url', image_url: { url } }] }] });
      await post(a, '/v1/chat/completions', { model: 'oa', messages: [{ role: 'user', content: [{ type: 'text', text: 'Once more. [[say more]]' }, { type: 'image_url', image_url: { url } }] }] });
      expect((await db.query('SELECT count(*)::int AS n FROM blobs')).rows[0]).toEqual({ n: 1 });
    } finally {
      await db.end().catch(() => undefined);
      for (const p of proxies) await p.close();
    }
    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(JSON.parse(replay.stdout)).toMatchObject({ failed: 0 });

    // `proxy migrate` takes the images with the logs: to files (blobs/<sha256>), and back to another database.
    const files = join(pgw.dir, 'migrated');
    const out = await runCli(['migrate', '--from', 'postgres', '--to', 'files', '--data-dir', files, '--url-env', env, '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ moved: 3, images: 1, failed: [] });
    expect(readFileSync(join(files, 'blobs', sha256)).equals(bytes)).toBe(true);
    const back = 'PP_TEST_IMAGES_BACK_DB';
    process.env[back] = await pgw.server.createDatabase('images_back');
    const home = await runCli(['migrate', '--from', 'files', '--to', 'postgres', '--data-dir', files, '--url-env', back, '--json']);
    expect(home.code, home.stderr).toBe(0);
    expect(JSON.parse(home.stdout)).toMatchObject({ moved: 3, images: 1, failed: [] });
    const again = new pg.Client({ connectionString: process.env[back] });
    await again.connect();
    try {
      const rows = (await again.query<{ sha256: string; bytes: Buffer }>('SELECT sha256, bytes FROM blobs')).rows;
      expect(rows.map((r) => r.sha256)).toEqual([sha256]);
      expect(rows[0]!.bytes.equals(bytes)).toBe(true);
    } finally {
      await again.end();
    }
    // An image missing from the source fails the migration, and says which.
    rmSync(join(files, 'blobs', sha256));
    const lost = 'PP_TEST_IMAGES_LOST_DB';
    process.env[lost] = await pgw.server.createDatabase('images_lost');
    const broken = await runCli(['migrate', '--from', 'files', '--to', 'postgres', '--data-dir', files, '--url-env', lost, '--json']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`image ${sha256} is missing from the source store`);
  }, 120_000);
});
