/**
 * A replica started while its database is down (docs/scaling.md, Outages): it waits, saying so,
 * and serves once the database is up; given up, it exits 2 instead of staying up without listening.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { usePgWorld } from './pg-world.js';
import { freePort, replicaConfig, startReplica, type Replica } from './replica-procs.js';

const pgw = usePgWorld('pp-startup-wait-');

describe('a replica started before its database', () => {
  it('waits for the database and then serves', async () => {
    const env = 'PP_TEST_STARTUP_DB';
    process.env[env] = await pgw.server.createDatabase('startup');
    const port = await freePort();
    const config = await replicaConfig(pgw.dir, 'sw', port, env, pgw.sim.urlFor('openai'));
    const r: Replica = { name: 'sw', origin: `http://127.0.0.1:${port}`, child: undefined, stderr: '', exited: Promise.resolve(0) };
    pgw.server.pause();
    let resumedAt = 0;
    const resume = new Promise<void>((resolve) => setTimeout(() => {
      pgw.server.resume();
      resumedAt = Date.now();
      resolve();
    }, 2000));
    try {
      await startReplica(r, config);
      const readyAt = Date.now();
      await resume;
      // Ready only once the database was back: it waited rather than failing or serving without it.
      expect(readyAt).toBeGreaterThanOrEqual(resumedAt);
      const res = await fetch(`${r.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
        body: JSON.stringify({ model: 'oa', messages: [{ role: 'user', content: 'hello after the wait' }] }),
      });
      expect(res.status).toBe(200);
    } finally {
      r.child?.kill('SIGKILL');
      await resume;
    }
  }, 60_000);

  it('pointed at a database that never comes, exits 2 once the wait is over', async () => {
    const env = 'PP_TEST_STARTUP_NONE';
    process.env[env] = `postgres://postgres@127.0.0.1:${await freePort()}/none`;
    const port = await freePort();
    const config = await replicaConfig(pgw.dir, 'sn', port, env, pgw.sim.urlFor('openai'), '');
    const { readFile, writeFile } = await import('node:fs/promises');
    await writeFile(config, (await readFile(config, 'utf8')).replace('connect_timeout_seconds = 2', 'connect_timeout_seconds = 2\nstartup_wait_seconds = 1'));
    const child = spawn(process.execPath, [join(process.cwd(), 'dist', 'cli', 'main.js'), 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(out).toContain('the database is not reachable yet');
    expect(out).toContain('could not be reached in the 1 s');
  }, 30_000);
});
