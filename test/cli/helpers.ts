/** Helpers for the CLI tests: run the compiled `proxy` binary, write logs as the store does. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LogEvent } from '../../src/core/events.js';

export const BIN = resolve(import.meta.dirname, '../../dist/cli/main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function proxy(args: string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One JSONL line per event, keys in the store's order. */
export function logText(events: readonly LogEvent[]): string {
  return events.map((e) => {
    const { seq, ts, type, ...rest } = e;
    return JSON.stringify({ seq, ts, type, ...rest });
  }).join('\n') + '\n';
}

export function writeSession(dataDir: string, id: string, events: readonly LogEvent[]): string {
  const dir = join(dataDir, 'sessions');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${id}.jsonl`);
  writeFileSync(file, logText(events));
  return file;
}
