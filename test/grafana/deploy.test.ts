/**
 * The container files, without a Docker engine: the Dockerfile's shape (multi-stage, production
 * dependencies only, non-root, /data volume, node healthcheck), its start command run exactly as
 * the image runs it (from an /app-like directory holding dist/, against a temp data dir) until
 * /healthz and the HEALTHCHECK command answer, and prometheus.yml checked by promtool.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
/** Instructions with their continuation lines joined, comments dropped. */
const instructions = dockerfile.replace(/\\\n/g, ' ').split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
const jsonArg = (keyword: string): string[] => {
  const line = instructions.find((l) => l.startsWith(`${keyword} `));
  if (line === undefined) throw new Error(`Dockerfile has no ${keyword}`);
  const json = line.slice(line.indexOf('['));
  return JSON.parse(json) as string[];
};

describe('Dockerfile', () => {
  it('builds in one node:20-bookworm-slim stage and runs from another with production dependencies only', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms).toEqual(['FROM node:20-bookworm-slim AS build', 'FROM node:20-bookworm-slim AS runtime']);
    const runtime = instructions.slice(instructions.indexOf(froms[1]!));
    const build = instructions.slice(0, instructions.indexOf(froms[1]!));
    expect(build.join('\n')).toMatch(/RUN npm ci\b/);
    expect(build.join('\n')).toMatch(/RUN npm run build/);
    // `prepare` runs tsc, which the runtime stage does not have.
    expect(runtime.join('\n')).toMatch(/RUN npm ci --omit=dev --ignore-scripts/);
    expect(runtime).toContain('COPY --from=build /app/dist ./dist');
    expect(runtime.join('\n')).not.toMatch(/COPY (src|\.) /);
  });

  it('runs as a non-root user with /data as a volume, PROXY_DATA_DIR, port 8787 and a node healthcheck', () => {
    const user = instructions.filter((l) => l.startsWith('USER ')).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/USER (root|0)\b/);
    expect(instructions).toContain('VOLUME /data');
    expect(instructions).toContain('EXPOSE 8787');
    expect(dockerfile).toMatch(/PROXY_DATA_DIR=\/data/);
    const health = jsonArg('HEALTHCHECK');
    expect(health[0]).toBe('node');
    expect(jsonArg('CMD')).toEqual(['node', 'dist/cli/main.js', 'serve', '--host', '0.0.0.0', '--data-dir', '/data', '--open']);
  });

  it('the build context leaves out node_modules, dist, data and local config', () => {
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', 'config.toml', '.git']) expect(ignore).toContain(entry);
  });
});

describe('the image\'s start command', () => {
  let app: string;
  let port: number;
  let child: ReturnType<typeof spawn> | undefined;
  let output = '';

  beforeAll(async () => {
    const dist = join(ROOT, 'dist', 'cli', 'main.js');
    if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`npm run build\` first (npm test does)`);
    app = mkdtempSync(join(tmpdir(), 'pp-image-'));
    // The image's /app: dist/ and no config.toml (so providers come from the environment).
    symlinkSync(join(ROOT, 'dist'), join(app, 'dist'));
    port = await freePort();
  });
  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
    }
    rmSync(app, { recursive: true, force: true });
  });

  it('serves /healthz on 0.0.0.0, passes the HEALTHCHECK command, writes to the data dir and stops on SIGTERM', async () => {
    const data = join(app, 'data');
    const [node, ...args] = jsonArg('CMD').map((a) => (a === '/data' ? data : a));
    expect(node).toBe('node');
    // Only the port differs from the image (8787 may be taken here).
    child = spawn(process.execPath, [...args, '--port', String(port)], {
      cwd: app,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PROXY_DATA_DIR: data },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true, 15_000, () => output);
    expect(output).toContain(`listening on http://0.0.0.0:${port}/v1`);
    expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ status: 'ok', damaged_sessions: 0 });

    const [hNode, ...hArgs] = jsonArg('HEALTHCHECK').map((a) => a.replace('8787', String(port)));
    expect(hNode).toBe('node');
    expect(spawnSync(process.execPath, hArgs, { timeout: 10_000 }).status).toBe(0);

    // A request through the built-in simulator lands in the data dir.
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim/sim-1', messages: [{ role: 'user', content: 'hello [[say hi]]' }] }),
    });
    expect(res.status).toBe(200);
    expect(readdirSync(join(data, 'sessions')).some((f) => f.endsWith('.jsonl'))).toBe(true);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('proxy_requests_total{');

    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // With the proxy gone, the healthcheck fails.
    expect(spawnSync(process.execPath, hArgs, { timeout: 10_000 }).status).toBe(1);
  });
});

describe('prometheus.yml and docker-compose.yml', () => {
  it('promtool accepts prometheus.yml, which scrapes the compose proxy on 8787', () => {
    const r = spawnSync('promtool', ['check', 'config', join(ROOT, 'prometheus.yml')], { encoding: 'utf8' });
    if (r.error !== undefined) {
      throw new Error(`promtool is not installed (${r.error.message}): apt-get install -y prometheus (npm test's pretest, scripts/test-servers.sh, does)`);
    }
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(join(ROOT, 'prometheus.yml'), 'utf8')).toMatch(/targets: \["proxy:8787"\]/);
  });

  it('compose runs the proxy, Prometheus with that file, and Grafana with the provisioning mounted', () => {
    const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
    for (const service of ['proxy', 'prometheus', 'grafana']) expect(compose).toMatch(new RegExp(`^ {2}${service}:$`, 'm'));
    expect(compose).toContain('./prometheus.yml:/etc/prometheus/prometheus.yml');
    expect(compose).toContain('./grafana/provisioning:/etc/grafana/provisioning');
    expect(compose).toMatch(/proxy-data:\/data/);
    expect(compose).toMatch(/image: grafana\/grafana:11\./);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function waitFor(check: () => Promise<boolean>, ms: number, context: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not ready within ${ms} ms; output:\n${context()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
