/**
 * `proxy serve` processes on one PostgreSQL for the replica tests (drains, outages, chaos): each on
 * a fixed port so a restart comes back where the balancer looks, started from `dist/`, its stderr
 * kept for the failure message.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

export interface Replica {
  name: string;
  origin: string;
  child: ChildProcess | undefined;
  stderr: string;
  /** Resolves with the exit code (or the signal's name) of the current process. */
  exited: Promise<number | string>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A replica's config: the store at `$urlEnv`, `oa` routed to the simulator, `extra` appended. */
export async function replicaConfig(dir: string, name: string, port: number, urlEnv: string, simUrl: string, extra = ''): Promise<string> {
  const path = join(dir, `${name}.toml`);
  await writeFile(path, `
listen = "127.0.0.1:${port}"
data_dir = ${JSON.stringify(join(dir, name))}
drain_seconds = 20

[store]
kind = "postgres"
url_env = "${urlEnv}"
lock_wait_seconds = 20
connect_timeout_seconds = 2

[providers.oa]
preset = "generic"
base_url = "${simUrl}"

[models.oa]
provider = "oa"
model = "sim-model"
${extra}`);
  return path;
}

/** Starts (or restarts) the replica's process and waits until /readyz answers 200. */
export async function startReplica(r: Replica, configPath: string): Promise<void> {
  const main = join(process.cwd(), 'dist', 'cli', 'main.js');
  const child = spawn(process.execPath, [main, 'serve', '--config', configPath], { stdio: ['ignore', 'ignore', 'pipe'], env: process.env });
  r.child = child;
  r.stderr = '';
  child.stderr!.on('data', (d: Buffer) => (r.stderr += d.toString()));
  r.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${r.name} exited at start: ${r.stderr}`);
    const ok = await fetch(`${r.origin}/readyz`).then((res) => res.ok, () => false);
    if (ok) return;
    if (i > 400) throw new Error(`${r.name} did not become ready: ${r.stderr}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}
