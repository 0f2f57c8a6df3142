/**
 * The peers, each started as its own process on loopback: the fake upstream, the bare pipe, the
 * durable floor (also on prefix-proxy's stack), Portkey's gateway and prefix-proxy (from dist/, as `proxy serve` runs it), also with its
 * data directory on tmpfs. Every target but the upstream sends its requests to the one upstream process of the round.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { dataDir } from '../data-dirs.js';
import { PORTKEY_VERSION, portkeyEntry } from './portkey.js';

/**
 * `prefix-proxy-tmpfs` is this build with its data directory on tmpfs: the same work, but no file
 * costs the disk anything (creating one allocates no disk, fdatasync returns at once), so the gap
 * to `prefix-proxy` is what the disk costs it (docs/decisions.md, What the disk costs, and what it does not).
 * `baseline` is prefix-proxy from another build (`--baseline`), for a before and after in one run.
 */
export const TARGET_NAMES = ['upstream', 'pipe', 'floor', 'stack-floor', 'portkey', 'prefix-proxy', 'prefix-proxy-tmpfs', 'baseline'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export const TARGET_LABELS: Record<TargetName, string> = {
  upstream: 'upstream alone',
  pipe: 'bare pipe',
  floor: 'durable floor',
  'stack-floor': 'durable floor, prefix-proxy\'s stack',
  portkey: `Portkey ${PORTKEY_VERSION}`,
  'prefix-proxy': 'prefix-proxy',
  'prefix-proxy-tmpfs': 'prefix-proxy, data on tmpfs',
  baseline: 'prefix-proxy, baseline build',
};

export interface Target {
  name: TargetName;
  pid: number;
  /** `http://127.0.0.1:N` */
  origin: string;
  path: string;
  model: string;
  headers: Record<string, string>;
  /** The lines of its recent output that speak of an error (why a run failed, in its own words). */
  errors(): string[];
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Where prefix-proxy writes a .cpuprofile on exit; absent: no profile. */
  cpuProfDir?: string;
  /** The baseline's `dist/cli/main.js` (another checkout, built). */
  baselineMain?: string;
}

/** This checkout's bench folder once compiled (dist-bench/bench) and the repository root. */
const HERE = import.meta.dirname;
const ROOT = join(HERE, '..', '..', '..');
export const PROXY_MAIN = join(ROOT, 'dist', 'cli', 'main.js');

const READY_MS = 30_000;

export async function startUpstream(): Promise<Target> {
  const child = spawn(process.execPath, [join(HERE, 'upstream.js'), '--port', '0'], childOptions());
  const port = Number((await waitFor(child, /listening (\d+)/, 'upstream'))[1]);
  return target('upstream', child, port, { model: 'peers-1', headers: {} });
}

export async function startTarget(name: Exclude<TargetName, 'upstream'>, upstream: Target, opts: StartOptions = {}): Promise<Target> {
  const up = upstream.origin;
  if (name === 'pipe') {
    const child = spawn(process.execPath, [join(HERE, 'pipe.js'), '--port', '0', '--upstream', up], childOptions());
    const port = Number((await waitFor(child, /listening (\d+)/, 'pipe'))[1]);
    return target('pipe', child, port, { model: 'peers-1', headers: {} });
  }
  if (name === 'floor' || name === 'stack-floor') {
    const dir = await dataDir(`prefix-proxy-bench-${name}-`);
    const child = spawn(process.execPath, [join(HERE, `${name}.js`), '--port', '0', '--upstream', up, '--dir', dir], childOptions());
    const port = Number((await waitFor(child, /listening (\d+)/, name))[1]);
    return target(name, child, port, { model: 'peers-1', headers: {} });
  }
  if (name === 'portkey') {
    const port = await freePort();
    const child = spawn(process.execPath, [await portkeyEntry(), `--port=${port}`, '--headless'], childOptions());
    await waitFor(child, /Ready for connections/, 'portkey');
    return target('portkey', child, port, {
      model: 'peers-1',
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${up}/v1`, authorization: 'Bearer x' },
    });
  }
  if (name === 'baseline') {
    if (opts.baselineMain === undefined) throw new Error('peers: the baseline target needs --baseline');
    return startPrefixProxy(up, opts, 'baseline', opts.baselineMain);
  }
  if (name === 'prefix-proxy-tmpfs') return startPrefixProxy(up, opts, name, PROXY_MAIN, tmpfsDir());
  return startPrefixProxy(up, opts, 'prefix-proxy', PROXY_MAIN);
}

/** statfs magic numbers (linux/magic.h) of the file systems a temp directory is likely on. */
const FILE_SYSTEMS = new Map([[0xef53, 'ext4'], [0x01021994, 'tmpfs'], [0x58465342, 'xfs'], [0x9123683e, 'btrfs'], [0x794c7630, 'overlayfs']]);

/** The file system `dir` is on, by name where it is one of the above. */
export function fileSystemOf(dir: string): string {
  try {
    const type = statfsSync(dir).type;
    return FILE_SYSTEMS.get(type) ?? `file system type 0x${type.toString(16)}`;
  } catch {
    return 'file system unknown';
  }
}

const SHM = '/dev/shm';

/** A tmpfs to put a data directory on, or an error that says there is none. */
function tmpfsDir(): string {
  if (fileSystemOf(SHM) !== 'tmpfs') throw new Error(`peers: prefix-proxy-tmpfs needs a tmpfs at ${SHM}`);
  return SHM;
}

async function startPrefixProxy(upstreamOrigin: string, opts: StartOptions, name: 'prefix-proxy' | 'prefix-proxy-tmpfs' | 'baseline', main: string, elsewhere?: string): Promise<Target> {
  const dir = await dataDir('prefix-proxy-bench-peers-', elsewhere);
  const config = join(dir, 'config.toml');
  // One route to the fake upstream, large enough that no request is trimmed or elided (the
  // others forward every byte too); no cache hints; room for the 1,000-session workload.
  await writeFile(config, `listen = "127.0.0.1:0"
data_dir = "${join(dir, 'data')}"

[providers.up]
preset = "generic"
base_url = "${upstreamOrigin}/v1"
api_key_env = ""

[models.peers]
provider = "up"
model = "peers-1"
context = 4000000
max_result_tokens = 1000000
cache_key = "off"
cache_control = "off"

[sessions]
max_live = 2000
`);
  const prof = opts.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`];
  const child = spawn(process.execPath, [...prof, main, 'serve', '--config', config, '--data-dir', join(dir, 'data'), '--port', '0'], childOptions());
  const port = Number((await waitFor(child, /listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/, name))[1]);
  return target(name, child, port, { model: 'peers', headers: { authorization: 'Bearer x' } });
}

function target(name: TargetName, child: ChildProcess, port: number, rest: Pick<Target, 'model' | 'headers'>): Target {
  let tail = '';
  const keep = (chunk: Buffer) => { tail = (tail + chunk.toString('utf8')).slice(-8192); };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    name, pid: child.pid!, origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', ...rest,
    errors: () => errorLines(tail),
    stop: () => stop(child),
  };
}

/** Each line that speaks of an error, with the first three stack frames under it. */
function errorLines(text: string): string[] {
  const lines = text.split('\n').map((l) => l.trim());
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (!/error/i.test(line) || line.startsWith('at ')) return;
    // Frames by function name only: file paths say where this machine keeps things, not what failed.
    const frames = lines.slice(i + 1, i + 4).filter((l) => l.startsWith('at ')).map((l) => l.replace(/\s*\((?:file|node):[^)]*\)$/, ''));
    out.push([line, ...frames].join(' '));
  });
  return [...new Set(out)];
}

/** A clean environment: no provider keys or proxy settings reach a target. */
export function childOptions() {
  return { env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] };
}

/** Waits for a line of the child's output; keeps draining its output after, so a chatty target never blocks on a full pipe. */
export function waitFor(child: ChildProcess, pattern: RegExp, name: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${name} did not start within ${READY_MS / 1000} s:\n${seen.slice(-2000)}`)), READY_MS);
    const finish = (err: Error | null, match?: RegExpExecArray) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err !== null) {
        child.kill('SIGKILL');
        reject(err);
      } else resolve(match!);
    };
    const onData = (chunk: Buffer) => {
      if (done) return;
      seen += chunk.toString('utf8');
      const match = pattern.exec(seen);
      if (match !== null) finish(null, match);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => finish(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${seen.slice(-2000)}`)));
  });
}

/** SIGTERM (prefix-proxy then closes and writes its CPU profile), SIGKILL after 10 s. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
