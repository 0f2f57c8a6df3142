/**
 * One end-to-end world per test file: a temp data dir, the simulator and the proxy on port 0 on
 * loopback, a config.toml naming the simulator's per-mode URLs, and the official `openai` client.
 * Also small readers of the session logs, and a recording tap for looking at wire bodies.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import type { LogEvent } from '../../src/core/events.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';

export interface World {
  dir: string;
  sim: Sim;
  proxy: RunningProxy;
  client: OpenAI;
  /** The recording tap between the proxy and the simulator's deepseek and cerebras modes, if asked for. */
  tap: Tap | undefined;
  close(): Promise<void>;
}

export interface WorldOptions {
  sim?: SimOptions;
  /** Extra TOML appended to the config; a function is given the started simulator. */
  extraToml?: string | ((sim: Sim) => string);
  /** `body_limit` in bytes. */
  bodyLimit?: number;
  /** Put a recording tap between the proxy and the simulator for the deepseek and cerebras providers. */
  tap?: boolean;
}

/**
 * Models: `ds` (deepseek preset), `cb` (cerebras preset), `oa` (generic preset, openai mode),
 * `dead` (an address nothing listens on).
 */
export async function startWorld(opts: WorldOptions = {}): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-e2e-'));
  const sim = await createSim({ host: '127.0.0.1', port: 0, ...opts.sim });
  const tap = opts.tap === true ? await startTap(sim.origin) : undefined;
  const base = tap?.origin ?? sim.origin;
  const deadPort = await freePort();
  const toml = `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(dir, 'data'))}
${opts.bodyLimit === undefined ? '' : `body_limit = ${opts.bodyLimit}`}

[providers.ds]
preset = "deepseek"
base_url = "${base}/deepseek/v1"
api_key_env = ""

[providers.cb]
preset = "cerebras"
base_url = "${base}/cerebras/v1"
api_key_env = ""

[providers.oa]
preset = "generic"
base_url = "${sim.urlFor('openai')}"

[providers.dead]
preset = "generic"
base_url = "http://127.0.0.1:${deadPort}/v1"
timeouts = { connect_ms = 2000 }

[models.ds]
provider = "ds"
model = "deepseek-v4"

[models.cb]
provider = "cb"
model = "gpt-oss-120b"

[models.oa]
provider = "oa"
model = "sim-model"

[models.dead]
provider = "dead"
model = "nothing"
${typeof opts.extraToml === 'function' ? opts.extraToml(sim) : opts.extraToml ?? ''}
`;
  return openWorld(dir, sim, tap, toml);
}

/** Write `toml` as the world's config.toml, start the proxy on it and the official client. */
/**
 * A proxy whose one provider (`up`, generic preset) is the simulator behind a tap, with model `m`
 * (`sim-model`) and whatever `models` adds: the world the lineage and side-request tests share.
 */
export async function openTappedWorld(name: string, sim: SimOptions, models = ''): Promise<World & { tap: Tap }> {
  const dir = await mkdtemp(join(tmpdir(), `pp-${name}-`));
  const server = await createSim({ host: '127.0.0.1', port: 0, ...sim });
  const tap = await startTap(server.origin);
  return openWorld(dir, server, tap, `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(dir, 'data'))}

[providers.up]
preset = "generic"
base_url = "${tap.origin}/openai/v1"

[models.m]
provider = "up"
model = "sim-model"
${models}`);
}

export async function openWorld<T extends Tap | undefined>(dir: string, sim: Sim, tap: T, toml: string): Promise<World & { tap: T }> {
  const path = join(dir, 'config.toml');
  await writeFile(path, toml);
  const config = withSimulator(loadConfig({ path, env: {}, cwd: dir }), sim.url);
  const proxy = await startProxy(config);
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'test', maxRetries: 0 });
  return {
    dir, sim, proxy, client, tap,
    async close() {
      // The SDK's fetch may hold a connection it opened but never used (after an abort) until its
      // own keep-alive timeout; a graceful close would wait for it.
      proxy.app.server.closeAllConnections();
      await proxy.close();
      await tap?.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function sessionsDir(world: World): string {
  return join(world.dir, 'data', 'sessions');
}

/** Every session log: id -> events, parsed line by line. */
export async function readSessions(world: World): Promise<Map<string, LogEvent[]>> {
  const out = new Map<string, LogEvent[]>();
  let names: string[];
  try {
    names = await readdir(sessionsDir(world));
  } catch {
    return out;
  }
  for (const name of names.filter((n) => n.endsWith('.jsonl')).sort()) {
    const text = await readFile(join(sessionsDir(world), name), 'utf8');
    out.set(name.slice(0, -'.jsonl'.length), text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogEvent));
  }
  return out;
}

/** Total count of log lines over every session file (for "nothing appended"). */
export async function countLogLines(world: World): Promise<number> {
  let n = 0;
  for (const events of (await readSessions(world)).values()) n += events.length;
  return n;
}

/** The sessions created since `before` (ids not in it). */
export async function newSessions(world: World, before: ReadonlySet<string>): Promise<Map<string, LogEvent[]>> {
  const all = await readSessions(world);
  return new Map([...all].filter(([id]) => !before.has(id)));
}

export async function sessionIds(world: World): Promise<Set<string>> {
  return new Set((await readSessions(world)).keys());
}

export async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, ms = 2000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(10);
  }
}

/** A unique tag so that conversations of different tests never share a prefix. */
let counter = 0;
export function tag(name: string): string {
  counter++;
  return `${name}-${process.pid}-${counter}`;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One upstream exchange as the tap saw it. */
export interface TappedRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The upstream's status; 0 until it answered. */
  status: number;
  /** The whole response body as text (SSE, NDJSON or JSON); '' until it has ended. */
  response: string;
}

export interface Tap {
  origin: string;
  requests: TappedRequest[];
  close(): Promise<void>;
}

/**
 * A pass-through HTTP server in front of an upstream: records each request (body parsed as JSON
 * when it is) and the whole response text, and forwards both unchanged.
 */
export async function startTap(target: string): Promise<Tap> {
  const requests: TappedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
      const record: TappedRequest = { path: req.url ?? '', headers: req.headers, body, status: 0, response: '' };
      requests.push(record);
      const up = httpRequest(`${target}${req.url ?? ''}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (upRes) => {
        record.status = upRes.statusCode ?? 0;
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        const got: Buffer[] = [];
        upRes.on('data', (c: Buffer) => {
          got.push(c);
          res.write(c);
        });
        upRes.on('end', () => {
          record.response = Buffer.concat(got).toString('utf8');
          res.end();
        });
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/cli/main.js ARGS` (the built CLI: `npm test` builds first; run `npm run build` by hand). */
export async function runCli(args: string[]): Promise<CliResult> {
  const main = join(process.cwd(), 'dist', 'cli', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `proxy replay --all` over the world's data dir. */
export function replayAll(world: World): Promise<CliResult> {
  return runCli(['replay', '--all', '--json', '--data-dir', join(world.dir, 'data')]);
}
