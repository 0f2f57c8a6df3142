/**
 * A proxy for the `proxy sessions prune` tests: the simulator, a config with `[sessions]
 * locate_days`, the proxy on a clock the test moves (`world.at`), the official client, and a way
 * to restart the proxy on the same data.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { createSim, type Sim } from '../../src/sim/server.js';

export const DAY = 86_400_000;
export type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
/** Sent with a conversation so that it stays live after its answer (a one-shot call leaves memory). */
export const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

export interface PruneWorld {
  dir: string;
  config: string;
  dataDir: string;
  proxy: RunningProxy;
  client: OpenAI;
  /** The proxy's clock, ms since the epoch. */
  at: number;
  /** Stops the proxy and starts it again on the same data. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startPruneWorld(locateDays: number, at: number): Promise<PruneWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-prune-'));
  const sim: Sim = await createSim({ host: '127.0.0.1', port: 0 });
  const config = join(dir, 'config.toml');
  const dataDir = join(dir, 'data');
  await writeFile(config, `listen = "127.0.0.1:0"\ndata_dir = ${JSON.stringify(dataDir)}\n\n[sessions]\nlocate_days = ${locateDays}\n`);
  const start = async () => {
    const proxy = await startProxy(withSimulator(loadConfig({ path: config, env: {}, cwd: dir }), sim.url), { now: () => new Date(world.at) });
    world.proxy = proxy;
    world.client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'test', maxRetries: 0 });
  };
  const stop = async () => {
    world.proxy.app.server.closeAllConnections();
    await world.proxy.close();
  };
  const world = {
    dir, config, dataDir, at, proxy: undefined as unknown as RunningProxy, client: undefined as unknown as OpenAI,
    async restart() {
      await stop();
      await start();
    },
    async close() {
      await stop();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await start();
  return world;
}
