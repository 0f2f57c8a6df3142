import { inspect } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMIT, DEFAULT_ID_HEADERS, hostToUrl } from '../../src/config/build.js';
import { loadConfig } from '../../src/config/load.js';
import { loadToml, tempDir, thrown } from './helpers.js';

const KEY = 'sk-test-0123456789abcdefSECRET';

describe('loadConfig', () => {
  it('applies defaults to an empty file', () => {
    const config = loadToml('');
    expect(config.file).toBe('config.toml');
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(config.bodyLimit).toBe(DEFAULT_BODY_LIMIT);
    expect(DEFAULT_BODY_LIMIT).toBe(32 * 1024 * 1024);
    // Unset: a route's context is its own, else the catalogue's, else the default.
    expect(config.window).toMatchObject({ context: undefined, output_reserve: undefined, protected_entries: 4 });
    expect(config.defaultSizes).toMatchObject({ context: 131072, high_water: 98304, low_water: 61440 });
    expect(config.sessions).toEqual({
      idHeaders: ['x-session-id', 'x-session-affinity', 'session_id', 'session-id', 'goose-session-id', 'x-claude-code-session-id'],
      idBodyFields: ['session_id', 'prompt_cache_key'],
      idleMinutes: 30,
      maxLive: 256,
      maxLiveMb: 512,
      locateDays: 30,
      wireCacheMb: 4,
      durability: 'fsync',
    });
    expect(config.sessions.idHeaders).toEqual(DEFAULT_ID_HEADERS);
    expect(Object.keys(config.providers)).toEqual(['sim']);
    expect(config.providers.sim).toMatchObject({ preset: 'sim', builtinSim: true, baseUrl: undefined });
    expect(config.adminKey).toBeUndefined();
  });

  it('resolves data_dir against the file directory and overrides against the cwd', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'proxy.toml'), 'data_dir = "state"\nlisten = "[::1]:9000"\n');
    const fromFile = loadConfig({ path: 'etc/proxy.toml', env: {}, cwd: dir });
    expect(fromFile.file).toBe('etc/proxy.toml');
    expect(fromFile.dataDir).toBe(resolve(dir, 'etc', 'state'));
    expect(fromFile.listen).toEqual({ host: '::1', port: 9000 });
    const overridden = loadConfig({ path: 'etc/proxy.toml', env: {}, cwd: dir, overrides: { port: 0, host: '0.0.0.0', dataDir: 'd2' } });
    expect(overridden.listen).toEqual({ host: '0.0.0.0', port: 0 });
    expect(overridden.dataDir).toBe(resolve(dir, 'd2'));
  });

  it('names a missing file', () => {
    const err = thrown(() => loadConfig({ path: 'nope.toml', env: {}, cwd: tempDir() }));
    expect(err.message).toBe('nope.toml: (file): cannot be read: no such file');
  });

  it('refuses a port out of range, in the file or as an override', () => {
    expect(thrown(() => loadToml('listen = "127.0.0.1:70000"')).message).toBe('config.toml: listen: expected a port from 0 to 65535, got 70000');
    const dir = tempDir();
    expect(thrown(() => loadConfig({ env: {}, cwd: dir, overrides: { port: -1 } })).message).toBe('environment: --port: expected a port from 0 to 65535, got -1');
  });

  it('builds providers from the environment when there is no file, sim always among them', () => {
    const env = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: 'a', OPENROUTER_API_KEY: 'o', DEEPSEEK_API_KEY: 'd', GROQ_API_KEY: 'g', XAI_API_KEY: 'x', CEREBRAS_API_KEY: 'c', FIREWORKS_API_KEY: 'f', TOGETHER_API_KEY: 't', GEMINI_API_KEY: 'ge', OLLAMA_HOST: '10.0.0.5:11434', EMPTY: '' };
    const config = loadConfig({ env, cwd: tempDir() });
    expect(config.file).toBeUndefined();
    expect(Object.keys(config.providers).sort()).toEqual(
      ['anthropic', 'cerebras', 'deepseek', 'fireworks', 'gemini-openai', 'groq', 'ollama', 'openai', 'openrouter', 'sim', 'together', 'xai'],
    );
    expect(config.providers.openai?.apiKey?.reveal()).toBe(KEY);
    expect(config.providers.openai?.keySource).toBe('env OPENAI_API_KEY');
    expect(config.providers['gemini-openai']?.keySource).toBe('env GEMINI_API_KEY');
    expect(config.providers.ollama?.baseUrl).toBe('http://10.0.0.5:11434');
    expect(config.providers.ollama?.apiKey).toBeUndefined();
  });

  it('has only sim with an empty environment, and ignores blank keys', () => {
    const config = loadConfig({ env: { OPENAI_API_KEY: '  ' }, cwd: tempDir() });
    expect(Object.keys(config.providers)).toEqual(['sim']);
  });

  it('finds ./config.toml and then ignores the environment providers', () => {
    const config = loadToml('[providers.mine]\npreset = "openai"\n', { OPENAI_API_KEY: KEY, DEEPSEEK_API_KEY: 'x' });
    expect(Object.keys(config.providers)).toEqual(['mine', 'sim']);
    expect(config.providers.mine?.apiKey?.reveal()).toBe(KEY);
  });

  it('lets the file define its own sim provider', () => {
    const config = loadToml('[providers.sim]\npreset = "sim"\nbase_url = "http://127.0.0.1:9999/v1/"\n');
    expect(Object.keys(config.providers)).toEqual(['sim']);
    expect(config.providers.sim).toMatchObject({ builtinSim: false, baseUrl: 'http://127.0.0.1:9999/v1' });
  });

  it('reads keys from the named variable, passes the client bearer through when unset or ""', () => {
    const config = loadToml([
      '[providers.a]', 'preset = "openrouter"', 'api_key_env = "MY_KEY"',
      '[providers.b]', 'preset = "openrouter"',
      '[providers.c]', 'preset = "openrouter"', 'api_key_env = ""',
      '[providers.d]', 'preset = "vllm"', 'timeouts = { connect_ms = 5 }', 'headers = { "X-A" = "1" }', 'codex_headers = true',
    ].join('\n'), { MY_KEY: KEY, OPENROUTER_API_KEY: 'or' });
    expect(config.providers.a?.apiKey?.reveal()).toBe(KEY);
    expect(config.providers.b?.apiKey?.reveal()).toBe('or');
    expect(config.providers.c?.apiKey).toBeUndefined();
    expect(config.providers.c?.keySource).toMatch(/client's bearer is passed through/);
    expect(config.providers.d).toMatchObject({
      baseUrl: 'http://127.0.0.1:8000/v1',
      timeouts: { connect_ms: 5, headers_ms: 300_000, body_ms: 300_000, deadline_ms: 600_000 },
      headers: { 'X-A': '1' },
      codexHeaders: true,
      keySource: 'none (the client\'s bearer is passed through)',
    });
  });

  it('never prints a credential, and warns about keys written in the file', () => {
    const config = loadToml(`admin_key = "${KEY}-admin"\n[providers.o]\npreset = "openai"\napi_key = "${KEY}"\n`);
    expect(config.providers.o?.apiKey?.reveal()).toBe(KEY);
    expect(config.adminKey?.reveal()).toBe(`${KEY}-admin`);
    for (const text of [JSON.stringify(config), inspect(config, { depth: 10 }), config.describe(), String(config.providers.o?.apiKey), config.warnings.join('\n')]) {
      expect(text).not.toContain('SECRET');
    }
    expect(config.warnings.some((w) => w.includes('providers.o.api_key'))).toBe(true);
  });

  it('describes providers, models and which have a key', () => {
    const config = loadToml([
      '[providers.openai]', 'preset = "openai"',
      '[providers.anthropic]', 'preset = "anthropic"',
      '[models.gpt]', 'provider = "openai"', 'model = "gpt-5.5"', 'context = 100000',
    ].join('\n'), { OPENAI_API_KEY: KEY });
    const text = config.describe();
    expect(text).toContain('config: config.toml');
    expect(text).toMatch(/openai\s+openai\s+https:\/\/api\.openai\.com\/v1\s+key: env OPENAI_API_KEY/);
    expect(text).toMatch(/anthropic .*key: none: ANTHROPIC_API_KEY is not set/);
    expect(text).not.toContain('anthropic-messages: not supported yet');
    expect(text).toMatch(/sim\s+sim\s+built-in simulator/);
    expect(text).toContain('gpt -> openai/gpt-5.5   context 100000, water 73446/45904, cache_key session, cache_control off');
    expect(text).not.toContain(KEY);
  });

  it('loads config.example.toml', () => {
    const example = resolve(import.meta.dirname, '../../config.example.toml');
    const config = loadConfig({ path: example, env: { OPENAI_API_KEY: KEY }, cwd: tempDir() });
    expect(Object.keys(config.providers)).toEqual(['sim', 'openai', 'openrouter', 'anthropic', 'deepseek', 'cerebras', 'ollama']);
    expect(config.models.claude).toMatchObject({ provider: 'openrouter', model: 'anthropic/claude-sonnet-4.6', cacheControl: '1h', cacheKey: 'session' });
    expect(config.models.sonnet).toMatchObject({ provider: 'anthropic', thinking: 'enabled', cacheControl: 'ephemeral' });
    expect(config.models.claude?.figures.price).toEqual({ input: 3, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6, output: 15 });
    expect(config.models.local?.sizes).toMatchObject({ high_water: 61440, low_water: 30720, max_result_tokens: 3072 });
    // The example leaves output_reserve unset: set, it would cap every route's output (docs/wires.md).
    expect(config.window).toMatchObject({ context: 131072, output_reserve: undefined, protected_entries: 4 });
    expect(config.warnings).toEqual([]);
  });
});

describe('OLLAMA_HOST', () => {
  it('takes host, host:port, :port and URLs, and names the variable when it is none of these', () => {
    expect(hostToUrl('box')).toBe('http://box');
    expect(hostToUrl(':11434')).toBe('http://127.0.0.1:11434');
    expect(hostToUrl('https://ollama.example:443')).toBe('https://ollama.example:443');
    expect(hostToUrl('foo bar')).toBeUndefined();
    const err = thrown(() => loadConfig({ env: { OLLAMA_HOST: 'foo bar' }, cwd: tempDir() }));
    expect(err.message).toBe('environment: OLLAMA_HOST: expected host:port or an http(s) URL, got "foo bar"');
  });
});

describe('[auth] keys', () => {
  const hex = 'a'.repeat(64);
  it('reads a budget, its window (a month unless said) and a rate', () => {
    const config = loadToml(`[auth]\nkeys = [\n  { name = "a", sha256 = "${hex}", budget_usd = 2.5, requests_per_minute = 30 },\n  { name = "b", sha256 = "${hex.toUpperCase()}", budget_period = "day" },\n]\n`);
    expect(config.auth.keys).toEqual([
      { name: 'a', sha256: hex, models: undefined, budgetPeriod: 'month', budgetUsd: 2.5, requestsPerMinute: 30 },
      { name: 'b', sha256: hex, models: undefined, budgetPeriod: 'day' },
    ]);
  });

  it('names the key at fault: a negative budget, an unknown window, a rate of 0, two keys of one name', () => {
    expect(thrown(() => loadToml(`[auth]\nkeys = [{ name = "a", sha256 = "${hex}", budget_usd = -1 }]\n`)).message).toContain('auth.keys[0].budget_usd: expected a number >= 0');
    expect(thrown(() => loadToml(`[auth]\nkeys = [{ name = "a", sha256 = "${hex}", budget_period = "week" }]\n`)).message).toContain('auth.keys[0].budget_period: expected one of "day", "month", "total"');
    expect(thrown(() => loadToml(`[auth]\nkeys = [{ name = "a", sha256 = "${hex}", requests_per_minute = 0 }]\n`)).message).toContain('auth.keys[0].requests_per_minute: expected a positive integer');
    expect(thrown(() => loadToml(`[auth]\nkeys = [{ name = "a", sha256 = "${hex}" }, { name = "a", sha256 = "${hex}" }]\n`)).message).toContain('auth.keys[1].name: another key is named "a"');
  });

  it('[log]: JSON lines unless told text; another format names the key', () => {
    expect(loadToml('').logFormat).toBe('json');
    expect(loadToml('[log]\nformat = "text"\nlevel = "warn"\n')).toMatchObject({ logFormat: 'text', logLevel: 'warn' });
    expect(thrown(() => loadToml('[log]\nformat = "pretty"\n')).message).toContain('log.format: expected "json" or "text"');
  });
});
