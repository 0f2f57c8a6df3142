/**
 * A small world for the stats, CLI and Prometheus tests: the simulator and the proxy on port 0,
 * a temp data dir, a config whose `sim` model goes to the simulator with prices and a small
 * window (so a 15-request agent trace trims), and the official `openai` client.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { createSim, type Sim } from '../../src/sim/server.js';

export interface StatsWorld {
  dir: string;
  dataDir: string;
  configFile: string;
  config: Config;
  sim: Sim;
  proxy: RunningProxy;
  client: OpenAI;
  close(): Promise<void>;
}

/** USD per million tokens for the `sim` model. */
export const SIM_PRICE = { input: 2, cache_read: 0.2, cache_write: 2.5, output: 8 };

export async function startStatsWorld(opts: { extraToml?: (dir: string) => string } = {}): Promise<StatsWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-stats-'));
  const dataDir = join(dir, 'data');
  const sim = await createSim({ host: '127.0.0.1', port: 0 });
  const toml = `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(dataDir)}

[providers.simp]
preset = "generic"
base_url = "${sim.url}"

[models.sim]
provider = "simp"
model = "sim-1"
context = 5000
output_reserve = 1000
max_result_tokens = 1000
price = { input = ${SIM_PRICE.input}, cache_read = ${SIM_PRICE.cache_read}, cache_write = ${SIM_PRICE.cache_write}, output = ${SIM_PRICE.output} }
${opts.extraToml?.(dir) ?? ''}
`;
  const configFile = join(dir, 'config.toml');
  await writeFile(configFile, toml);
  const config = loadConfig({ path: configFile, env: {}, cwd: dir });
  const proxy = await startProxy(config);
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'test', maxRetries: 0 });
  return {
    dir, dataDir, configFile, config, sim, proxy, client,
    async close() {
      proxy.app.server.closeAllConnections();
      await proxy.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
