/**
 * What every PostgreSQL e2e file starts before its tests and removes after: a temporary cluster
 * (test/store/pg-server.ts), the simulator, and a scratch directory. The fields are set once
 * `beforeAll` has run; a file's own hooks, registered after this call, run after these start and
 * before they stop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import { startPgServer, type PgServer } from '../store/pg-server.js';

export interface PgWorld {
  server: PgServer;
  sim: Sim;
  dir: string;
}

/** Registers the hooks; `prefix` names the scratch directory (`pp-keys-`). */
export function usePgWorld(prefix: string): PgWorld {
  const w = {} as Partial<PgWorld>;
  beforeAll(async () => {
    w.server = await startPgServer();
    w.sim = await createSim({ host: '127.0.0.1', port: 0 });
    w.dir = await mkdtemp(join(tmpdir(), prefix));
  }, 120_000);
  afterAll(async () => {
    await w.sim?.close();
    w.server?.stop();
    if (w.dir !== undefined) await rm(w.dir, { recursive: true, force: true });
  });
  return w as PgWorld;
}
