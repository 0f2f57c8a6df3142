/**
 * Loading: find and read config.toml, parse it (smol-toml; a syntax error names file, line and
 * column), validate it (zod; every error names file and key) and build the Config. Without a
 * file, providers come from the environment's keys; the `sim` provider is always there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { buildConfig, type Env, type Overrides } from './build.js';
import { ConfigError, problemsFromIssues, syntaxError } from './format-issues.js';
import { PRESET_NAMES, presetOf } from './presets.js';
import { configSchema, type ConfigFile, type ProviderEntry } from './schema.js';
import type { Config } from './types.js';

export interface LoadOptions {
  /** Config file; absent: `./config.toml` if it exists, else the environment. */
  path?: string;
  env: Env;
  overrides?: Overrides;
  /** Where `./config.toml` and relative override paths are looked up; default `process.cwd()`. */
  cwd?: string;
  /** The time the catalogue's prices are taken at; default now. */
  now?: Date;
}

export const DEFAULT_CONFIG_FILE = 'config.toml';

export function loadConfig(options: LoadOptions): Config {
  const cwd = options.cwd ?? process.cwd();
  const overrides = options.overrides ?? {};
  const now = options.now ?? new Date();
  const label = options.path ?? (existsSync(resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
  if (label === undefined) {
    return buildConfig(
      { providers: providersFromEnv(options.env) },
      { file: 'environment', fromFile: false, baseDir: cwd, cwd, env: options.env, overrides, now },
    );
  }
  const path = resolve(cwd, label);
  const file = parseConfigText(readText(path, label), label);
  return buildConfig(file, { file: label, fromFile: true, baseDir: dirname(path), cwd, env: options.env, overrides, now });
}

/** Parse and validate the text of a config file; `file` is the name errors give. */
export function parseConfigText(text: string, file: string): ConfigFile {
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    if (err instanceof TomlError) {
      // smol-toml's message is "Invalid TOML document: <what>\n\n<code block>"; keep the what.
      const what = (err.message.split('\n')[0] ?? '').replace(/^Invalid TOML document:\s*/, '');
      throw syntaxError(file, { line: err.line, column: err.column, detail: what });
    }
    throw err;
  }
  const result = configSchema.safeParse(data, { reportInput: true });
  if (!result.success) throw new ConfigError(file, problemsFromIssues(result.error.issues));
  return result.data;
}

/** One provider per preset whose key (or Ollama's host) the environment holds, named after the preset. */
export function providersFromEnv(env: Env): Record<string, ProviderEntry> {
  const providers: Record<string, ProviderEntry> = {};
  for (const name of PRESET_NAMES) {
    const preset = presetOf(name);
    if (!preset.fromEnv) continue;
    const hasKey = preset.apiKeyEnv !== undefined && isSet(env[preset.apiKeyEnv]);
    const hasHost = preset.baseUrlEnv !== undefined && isSet(env[preset.baseUrlEnv]);
    if (hasKey || hasHost) providers[name] = { preset: name };
  }
  return providers;
}

function isSet(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}

function readText(path: string, label: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new ConfigError(label, [{ key: '(file)', detail: `cannot be read: ${reason}` }]);
  }
}
