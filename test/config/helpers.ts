/** Test helpers: a config from TOML text in a fresh temporary directory. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'prefix-proxy-config-'));
}

/** Writes `text` as config.toml in a new directory and loads it by discovery (no path). */
export function loadToml(text: string, env: Record<string, string | undefined> = {}): Config {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.toml'), text);
  return loadConfig({ env, cwd: dir });
}

/** The error `fn` throws (fails the test if it throws nothing). */
export function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected an error, none was thrown');
}
