import { describe, expect, it } from 'vitest';
import { ConfigError, keyPath, showValue } from '../../src/config/format-issues.js';
import { parseConfigText } from '../../src/config/load.js';
import { isProxyError } from '../../src/core/errors.js';
import { loadToml, thrown } from './helpers.js';

/** Every line of the error, for files with several problems. */
function lines(text: string, file = 'config.toml'): string[] {
  const err = thrown(() => parseConfigText(text, file));
  expect(err).toBeInstanceOf(ConfigError);
  return err.message.split('\n');
}

describe('config errors name the file and the key', () => {
  it('says what was expected and what was found', () => {
    const out = lines('[models.claude]\nprovider = "openrouter"\nmodel = "x"\ncontext = "big"\n');
    expect(out).toEqual(['config.toml: models.claude.context: expected a positive integer, got "big"']);
  });

  it('lists every problem of a file, one line each', () => {
    const out = lines([
      'listen = 8787',
      'body_limit = -1',
      '[providers.or]',
      'preset = "openrouterx"',
      '[models.m]',
      'provider = "or"',
      'model = "a"',
      'cache_key = "always"',
      'price = { input = 1, cache_read = 0.1, cache_write = 1, output = "free" }',
    ].join('\n'));
    expect(out).toContain('config.toml: listen: expected "host:port", got 8787');
    expect(out).toContain('config.toml: body_limit: expected a positive integer, got -1');
    expect(out.find((l) => l.startsWith('config.toml: providers.or.preset: expected one of "openai", "openrouter"'))).toMatch(/got "openrouterx"$/);
    expect(out).toContain('config.toml: models.m.cache_key: expected one of "session", "header", "off", got "always"');
    expect(out).toContain('config.toml: models.m.price.output: expected a number >= 0, got "free"');
    expect(out).toHaveLength(5);
  });

  it('rejects unknown keys at every level and names the keys the table takes', () => {
    const out = lines('colour = 1\n[window]\ncontxt = 5\n[providers.a]\npreset = "openai"\nbase = "x"\n', 'my.toml');
    expect(out).toContain('my.toml: colour: unknown key; this table takes: listen, data_dir, admin_key_env, admin_key, body_limit, drain_seconds, allowed_origins, allowed_hosts, providers, models, window, sessions, store, upstream, auth, tracing, log');
    expect(out.some((l) => l.startsWith('my.toml: window.contxt: unknown key; this table takes: output_reserve, context,'))).toBe(true);
    expect(out.some((l) => l.startsWith('my.toml: providers.a.base: unknown key;') && l.includes('base_url'))).toBe(true);
  });

  it('names a missing required key', () => {
    const out = lines('[models.m]\nprovider = "sim"\n');
    expect(out).toEqual(['config.toml: models.m.model: missing; expected an upstream model id']);
  });

  it('quotes keys that need quoting, as TOML would', () => {
    const out = lines('[models."gpt-4.1"]\nprovider = "sim"\nmodel = "m"\nsystem = "keep"\n');
    expect(out).toEqual(['config.toml: models."gpt-4.1".system: expected one of "follow", "append", got "keep"']);
  });

  it('refuses a provider name with a slash (it would break provider/model routes)', () => {
    const out = lines('[providers."a/b"]\npreset = "openai"\n');
    expect(out[0]).toMatch(/^config\.toml: providers\."a\/b": expected a provider name of letters/);
  });

  it('checks list items and header names', () => {
    const out = lines('[sessions]\nid_headers = ["x-session-id", "bad header"]\nidle_minutes = 0\nlocate_days = -1\n');
    expect(out).toContain('config.toml: sessions.id_headers[1]: expected a header name (letters, digits, - and _), got "bad header"');
    expect(out).toContain('config.toml: sessions.idle_minutes: expected a number of minutes > 0, got 0');
    expect(out).toContain('config.toml: sessions.locate_days: expected a number of days >= 0 (0: always), got -1');
  });

  it('is a ProxyError with the config_invalid code', () => {
    const err = thrown(() => parseConfigText('listen = true', 'c.toml'));
    expect(isProxyError(err)).toBe(true);
    expect(err.code).toBe('config_invalid');
    expect((err as ConfigError).problems).toEqual([{ key: 'listen', detail: 'expected "host:port", got true' }]);
  });

  it('names file, line and column for TOML syntax errors', () => {
    const err = thrown(() => parseConfigText('listen = "127.0.0.1:1"\n[window]\ncontext = = 3\n', 'config.toml'));
    expect(err.code).toBe('config_syntax');
    expect(err.message).toMatch(/^config\.toml:3:\d+: invalid TOML: /);
    expect(err.message).not.toContain('\n');
  });

  it('reports problems found after validation with their keys', () => {
    const err = thrown(() => loadToml('[models.m]\nprovider = "nobody"\nmodel = "x"\n[providers.g]\npreset = "generic"\n'));
    const out = err.message.split('\n');
    expect(out).toContain('config.toml: providers.g.base_url: missing; the generic preset has no default address');
    expect(out).toContain('config.toml: models.m.provider: unknown provider "nobody"; configured: g, sim');
  });

  it('refuses api_key together with api_key_env, and an admin key variable that is not set', () => {
    const err = thrown(() => loadToml('admin_key_env = "ADMIN"\n[providers.o]\npreset = "openai"\napi_key = "k"\napi_key_env = "K"\n'));
    expect(err.message.split('\n')).toEqual([
      'config.toml: providers.o.api_key: set either api_key or api_key_env, not both',
      'config.toml: admin_key_env: the environment variable ADMIN is not set',
    ]);
  });

  it('formats paths and values', () => {
    expect(keyPath(['models', 'a.b', 'price', 'input'])).toBe('models."a.b".price.input');
    expect(keyPath([])).toBe('(top level)');
    expect(showValue({ a: 1 })).toBe('a table');
    expect(showValue([1])).toBe('a list');
    expect(showValue('x'.repeat(100))).toHaveLength(62);
  });
});
