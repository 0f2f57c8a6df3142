import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import type { EventBody } from '../../src/core/events.js';

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-log-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function userMsg(content: string): EventBody {
  return { type: 'client.msg', msg: { role: 'user', content } };
}

export const TS = '2026-01-02T03:04:05.000Z';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const DIST_STORE = fileURLToPath(new URL('../../dist/log/store.js', import.meta.url));

export function requireDist(): void {
  if (!existsSync(DIST_STORE)) {
    throw new Error(`${DIST_STORE} is missing: these tests run the compiled store; run \`npm run build\` first`);
  }
}

/** A node child running a fixture script, with its stdout as lines. */
export class Child {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<void>;
  #stderr = '';
  #partial = '';
  #listeners: (() => void)[] = [];

  constructor(script: string, args: string[]) {
    this.proc = spawn(process.execPath, [join(FIXTURES, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (this.#partial + chunk).split('\n');
      this.#partial = parts.pop()!;
      this.lines.push(...parts);
      for (const l of this.#listeners) l();
    });
    this.proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.proc.once('exit', () => resolve()));
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** Resolves with the first line matching, or rejects if the child exits or time runs out. */
  waitFor(test: (line: string) => boolean, ms = 4000): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.lines.find(test);
        if (hit === undefined) return false;
        cleanup();
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => fail('timed out'), ms);
      const fail = (why: string): void => {
        cleanup();
        reject(new Error(`child ${why}; stdout: ${this.lines.slice(-5).join(' | ')}; stderr: ${this.#stderr}`));
      };
      const onExit = (): void => {
        if (!check()) fail('exited');
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.#listeners = this.#listeners.filter((l) => l !== listener);
        this.proc.off('exit', onExit);
      };
      const listener = (): void => void check();
      if (check()) return;
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) return fail('exited');
      this.#listeners.push(listener);
      this.proc.once('exit', onExit);
    });
  }

  async kill(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    // After 'exit' the child is reaped: its pid no longer answers kill(pid, 0).
    await this.exited;
  }
}

/**
 * For a file of tests that run the compiled store in child processes: the compiled store required,
 * a temporary directory per test (`dir`), and the children a test started (push them on
 * `children`) killed after it, before the directory goes.
 */
export function childWorld(): { readonly dir: string; readonly children: Child[] } {
  let dir = '';
  let cleanup: (() => Promise<void>) | undefined;
  const children: Child[] = [];
  beforeAll(requireDist);
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    await cleanup?.();
  });
  return {
    get dir() {
      return dir;
    },
    children,
  };
}
