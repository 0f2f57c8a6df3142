import { DEFAULT_VOLATILE_LINES } from '../../src/config/build.js';
import { describe, expect, it } from 'vitest';
import { PRESET_NAMES, presetOf } from '../../src/config/presets.js';
import { listModels, resolveRoute, withSimulator } from '../../src/config/routes.js';
import { ProxyError } from '../../src/core/errors.js';
import { loadToml, thrown } from './helpers.js';

const TOML = [
  '[providers.openrouter]', 'preset = "openrouter"',
  '[providers.ds]', 'preset = "deepseek"', 'headers = { "X-Extra" = "1" }', 'timeouts = { headers_ms = 1000 }',
  '[providers.claude]', 'preset = "anthropic"',
  '[window]', 'context = 64000', 'output_reserve = 4000',
  '[models.claude]', 'provider = "openrouter"', 'model = "anthropic/claude-sonnet-4.6"', 'context = 200000',
  'cache_control = "1h"', 'price = { input = 3.0, cache_read = 0.3, cache_write = 3.75, output = 15.0 }',
  'system = "append"', 'client_drops = "absorb"', 'thinking = "adaptive"', 'keep_reasoning = true',
  '[models."ds/plain"]', 'provider = "ds"', 'model = "deepseek-v4"', 'reasoning = "none"', 'cache_key = "off"',
  '[models.opus]', 'provider = "claude"', 'model = "claude-opus-5"',
].join('\n');

const env = { OPENROUTER_API_KEY: 'or-key', DEEPSEEK_API_KEY: 'ds-key' };

describe('resolveRoute', () => {
  const config = loadToml(TOML, env);

  it('resolves a [models] name with its settings and recipe', () => {
    const route = resolveRoute(config, 'claude');
    expect(route).toMatchObject({
      name: 'claude', provider: 'openrouter', preset: 'openrouter', apiKey: 'or-key',
      cacheKey: 'session', cacheControl: '1h', topLevelCacheControl: true, affinityHeaders: ['x-session-id'],
      codexHeaders: false, keepReasoning: true, thinking: 'adaptive',
      price: { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 },
    });
    expect(route.dialect).toEqual({
      wire: 'openai-chat', preset: 'openrouter', provider: 'openrouter', model: 'anthropic/claude-sonnet-4.6',
      baseUrl: 'https://openrouter.ai/api/v1', reasoningOut: 'reasoning_content', reasoningOnToolTurns: false, headers: {},
      thinking: 'adaptive', keepReasoning: true, numCtx: 200000, maxTokensField: 'max_tokens',
    });
    expect(route.recipe).toEqual({
      version: 'window-v4', route: 'claude', context: 200000, output_reserve: 4000,
      high_water: 156800, low_water: 98000, max_result_tokens: 3266, protected_entries: 4,
      estimator: 'bytes/3', system: 'append', client_drops: 'absorb', volatile_lines: [...DEFAULT_VOLATILE_LINES],
    });
  });

  it('resolves provider/model with slashes in the model, sized and priced by the catalogue', () => {
    const route = resolveRoute(config, 'openrouter/anthropic/claude-sonnet-4.6');
    expect(route.name).toBe('openrouter/anthropic/claude-sonnet-4.6');
    expect(route.label).toBe('openrouter/anthropic/claude-sonnet-4.6');
    expect(route.dialect.model).toBe('anthropic/claude-sonnet-4.6');
    expect(route.cacheControl).toBe('off');
    expect(route.price).toEqual({ input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 });
    // The catalogue's context; [window]'s output reserve; the water marks follow.
    expect(route.recipe).toMatchObject({ context: 1_000_000, output_reserve: 4000, high_water: 796_800, low_water: 498_000, system: 'follow', client_drops: 'follow' });
  });

  it('resolves provider/model the catalogue does not know under the [window] defaults, without prices', () => {
    const route = resolveRoute(config, 'openrouter/nobody/unheard-of-7b');
    expect(route.label).toBe('openrouter/*');
    expect(route.price).toBeUndefined();
    expect(route.figures).toMatchObject({ context: { value: 64000, from: 'window' }, prices: {} });
    expect(route.figures.catalogue).toBeUndefined();
    expect(route.recipe).toMatchObject({ route: 'openrouter/nobody/unheard-of-7b', context: 64000, output_reserve: 4000, high_water: 48000, low_water: 30000 });
  });

  it('lets a [models] name win over a provider/model reading of the same text', () => {
    const route = resolveRoute(config, 'ds/plain');
    expect(route.name).toBe('ds/plain');
    expect(route.dialect.model).toBe('deepseek-v4');
    expect(route.dialect).toMatchObject({ reasoningOut: 'none', reasoningOnToolTurns: false, headers: { 'X-Extra': '1' } });
    expect(route.cacheKey).toBe('off');
    expect(route.timeouts).toEqual({ connect_ms: 10_000, headers_ms: 1000, body_ms: 300_000, deadline_ms: 600_000 });
    const direct = resolveRoute(config, 'ds/deepseek-v4');
    expect(direct.dialect).toMatchObject({ reasoningOut: 'reasoning_content', reasoningOnToolTurns: true });
    expect(direct.apiKey).toBe('ds-key');
  });

  it('throws model_not_found listing the models and provider forms', () => {
    for (const name of ['gpt-9', 'nobody/model', 'openrouter/', '/x']) {
      const err = thrown(() => resolveRoute(config, name));
      expect(err).toBeInstanceOf(ProxyError);
      expect(err.code).toBe('model_not_found');
      expect((err as ProxyError).status).toBe(404);
      expect((err as ProxyError).param).toBe('model');
      expect(err.message).toBe(`The model "${name}" does not exist. Known models: claude, ds/plain, opus, openrouter/..., ds/..., claude/..., sim/....`);
    }
  });

  it('resolves an Anthropic model to the anthropic-messages dialect, asking for the five-minute cache', () => {
    const route = resolveRoute(config, 'opus');
    expect(route.dialect).toMatchObject({ wire: 'anthropic-messages', preset: 'anthropic', provider: 'claude', model: 'claude-opus-5', baseUrl: 'https://api.anthropic.com/v1', reasoningOut: 'none' });
    expect(route).toMatchObject({ cacheKey: 'off', cacheControl: 'ephemeral', topLevelCacheControl: false });
    expect(resolveRoute(config, 'claude/claude-opus-5').dialect.wire).toBe('anthropic-messages');
  });

  it('gives a clear error at request time for a wire format not supported yet, while the config loads', () => {
    const later = PRESET_NAMES.find((n) => !presetOf(n).ready);
    // Once every wire format has its dialect there is nothing left to refuse.
    if (later === undefined) return;
    const withLater = loadToml(`[providers.later]\npreset = "${later}"\nbase_url = "http://127.0.0.1:9/v1"`, {});
    const err = thrown(() => resolveRoute(withLater, 'later/some-model'));
    expect(err.code).toBe('wire_not_supported');
    expect((err as ProxyError).status).toBe(400);
    expect(err.message).toContain(`${presetOf(later).wire} is not supported yet`);
  });

  it('resolves a name once per config: every request of it shares one frozen route', () => {
    const route = resolveRoute(config, 'openrouter/anthropic/claude-sonnet-4.6');
    expect(resolveRoute(config, 'openrouter/anthropic/claude-sonnet-4.6')).toBe(route);
    expect(Object.isFrozen(route) && Object.isFrozen(route.dialect.headers) && Object.isFrozen(route.deployments[0]!.headers)).toBe(true);
    // A name that fails is not kept: it fails again, and another config resolves its own.
    expect(thrown(() => resolveRoute(config, 'nowhere/x')).code).toBe('model_not_found');
    expect(thrown(() => resolveRoute(config, 'nowhere/x')).code).toBe('model_not_found');
    const other = loadToml(TOML, env);
    expect(resolveRoute(other, 'openrouter/anthropic/claude-sonnet-4.6')).not.toBe(route);
    expect(resolveRoute(other, 'openrouter/anthropic/claude-sonnet-4.6')).toStrictEqual(route);
  });

  it('keeps stale signed thinking for the API to drop on the models that bind it to its prefix, or as the route says', () => {
    const c = loadToml([
      '[providers.an]', 'preset = "anthropic"', '[providers.oa]', 'preset = "openai"',
      '[models.strip]', 'provider = "an"', 'model = "claude-sonnet-5-5"', 'stale_thinking = "strip"',
      '[models.drop]', 'provider = "an"', 'model = "claude-sonnet-4-6"', 'stale_thinking = "drop_block"',
    ].join('\n'), { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k' });
    const of = (name: string) => { const r = resolveRoute(c, name); return [r.dialect.dropStaleThinking === true, r.recipe.stale_blocks]; };
    expect(of('an/claude-sonnet-5-5')).toStrictEqual([true, 'keep']);
    expect(of('an/claude-fable-5-1')).toStrictEqual([true, 'keep']);
    expect(of('an/claude-opus-5')).toStrictEqual([false, undefined]);
    expect(of('an/claude-sonnet-4-6')).toStrictEqual([false, undefined]);
    expect(of('strip')).toStrictEqual([false, undefined]);
    expect(of('drop')).toStrictEqual([true, 'keep']);
    expect(of('oa/gpt-5.1')).toStrictEqual([false, undefined]);
    expect(() => loadToml(['[providers.oa]', 'preset = "openai"', '[models.x]', 'provider = "oa"', 'model = "gpt-5.1"', 'stale_thinking = "drop_block"'].join('\n'), { OPENAI_API_KEY: 'k' }))
      .toThrow(/stale_thinking.*signed thinking blocks are Anthropic's/s);
  });

  it('puts the output limit in the field each model takes, and caps only where the wire or the config asks', () => {
    const c = loadToml([
      '[providers.oa]', 'preset = "openai"', '[providers.gen]', 'preset = "generic"', 'base_url = "http://127.0.0.1:9/v1"',
      '[providers.ds]', 'preset = "deepseek"', '[providers.an]', 'preset = "anthropic"',
      '[models.old]', 'provider = "gen"', 'model = "gpt-5.1"', 'max_tokens_field = "max_tokens"',
      '[models.reserved]', 'provider = "oa"', 'model = "gpt-5.1"', 'output_reserve = 2000',
    ].join('\n'), { OPENAI_API_KEY: 'k', DEEPSEEK_API_KEY: 'k', ANTHROPIC_API_KEY: 'k' });
    const field = (name: string) => resolveRoute(c, name).dialect.maxTokensField;
    // OpenAI takes max_completion_tokens for every model; a compatible server by the model's name.
    expect([field('oa/gpt-4o'), field('oa/gpt-5.1'), field('gen/o3'), field('gen/llama-3'), field('ds/deepseek-chat'), field('old')])
      .toStrictEqual(['max_completion_tokens', 'max_completion_tokens', 'max_completion_tokens', 'max_tokens', 'max_tokens', 'max_tokens']);
    expect(resolveRoute(c, 'an/claude-opus-5').dialect.maxTokensField).toBeUndefined();
    const cap = (name: string) => resolveRoute(c, name).recipe.output_cap;
    expect([cap('oa/gpt-5.1'), cap('ds/deepseek-chat'), cap('an/claude-opus-5'), cap('reserved')]).toStrictEqual(['client', 'client', undefined, undefined]);
    expect([resolveRoute(c, 'oa/o3').reasoningModel, resolveRoute(c, 'oa/gpt-4o').reasoningModel, resolveRoute(c, 'gen/o3').reasoningModel]).toStrictEqual([true, false, false]);
  });

  it('routes to the built-in simulator once its address is known', () => {
    expect(thrown(() => resolveRoute(config, 'sim/sim-1')).message).toMatch(/simulator, which has not been started/);
    const started = withSimulator(config, 'http://127.0.0.1:41234/v1/');
    const route = resolveRoute(started, 'sim/sim-1');
    expect(route.dialect).toMatchObject({ baseUrl: 'http://127.0.0.1:41234/v1', preset: 'sim', reasoningOut: 'reasoning_content' });
    expect(route.apiKey).toBeUndefined();
    expect(started.describe()).toContain('http://127.0.0.1:41234/v1');
    expect(config.providers.sim?.baseUrl).toBeUndefined();
  });

  it('lists the configured models for GET /v1/models', () => {
    expect(listModels(config)).toEqual([
      { id: 'claude', provider: 'openrouter', model: 'anthropic/claude-sonnet-4.6' },
      { id: 'ds/plain', provider: 'ds', model: 'deepseek-v4' },
      { id: 'opus', provider: 'claude', model: 'claude-opus-5' },
    ]);
  });

  it('reports water marks that do not fit as config errors naming the key', () => {
    const err = thrown(() => loadToml('[window]\nlow_water = 90000\nhigh_water = 80000\n[models.m]\nprovider = "sim"\nmodel = "x"\ncontext = 50000\n'));
    expect(err.message.split('\n')).toEqual([
      'config.toml: window.low_water: low_water 90000 must be below high_water 80000',
      'config.toml: window.high_water: high_water 80000 does not fit models.m: context 50000 - output_reserve 8192 = 41808',
    ]);
  });
});

describe('water-mark errors', () => {
  it('reports a bad [window] value once, not once per model that inherits it', () => {
    const err = thrown(() => loadToml('[window]\nlow_water = 90000\nhigh_water = 80000\n[models.a]\nprovider = "sim"\nmodel = "x"\n[models.b]\nprovider = "sim"\nmodel = "y"\n'));
    expect(err.message.split('\n')).toEqual(['config.toml: window.low_water: low_water 90000 must be below high_water 80000']);
  });
});

describe('routes to the ollama-chat and openai-responses wires', () => {
  const config = loadToml([
    '[providers.local]', 'preset = "ollama"',
    '[providers.oai]', 'preset = "openai-responses"', 'codex_headers = true',
    '[models.qwen]', 'provider = "local"', 'model = "qwen3:30b"', 'context = 98304', 'keep_alive = "2h"', 'thinking = "disabled"',
    '[models.sol]', 'provider = "oai"', 'model = "gpt-6.1-sol"', 'keep_reasoning = true',
  ].join('\n'), { OPENAI_API_KEY: 'sk-x' });

  it('fills num_ctx from the context, keep_alive and thinking from the model entry', () => {
    const route = resolveRoute(config, 'qwen');
    expect(route.dialect).toMatchObject({ wire: 'ollama-chat', baseUrl: 'http://127.0.0.1:11434', numCtx: 98304, keepAlive: '2h', thinking: 'disabled' });
    expect(route.dialect).not.toHaveProperty('keepReasoning');
    expect(resolveRoute(config, 'local/llama3.2').dialect).not.toHaveProperty('keepAlive');
  });

  it('passes keep_reasoning to a Responses route, with the Codex headers setting', () => {
    const route = resolveRoute(config, 'sol');
    expect(route.dialect).toMatchObject({ wire: 'openai-responses', baseUrl: 'https://api.openai.com/v1', keepReasoning: true });
    expect(route).toMatchObject({ codexHeaders: true, cacheKey: 'session', apiKey: 'sk-x' });
  });

  it('takes keep_alive as a duration or whole seconds, and names the key when it is neither', () => {
    expect(resolveRoute(loadToml('[providers.l]\npreset = "ollama"\n[models.m]\nprovider = "l"\nmodel = "x"\nkeep_alive = -1\n', {}), 'm').dialect.keepAlive).toBe(-1);
    const err = thrown(() => loadToml('[providers.l]\npreset = "ollama"\n[models.m]\nprovider = "l"\nmodel = "x"\nkeep_alive = 1.5\n', {}));
    expect(err.message).toContain('models.m.keep_alive');
  });
});

describe('retries and fallback deployments (docs/faults.md)', () => {
  const toml = (model: string) => [
    '[providers.a]', 'preset = "generic"', 'base_url = "http://a.test/v1"', 'api_key_env = "A_KEY"', 'headers = { "X-A" = "1" }',
    '[providers.b]', 'preset = "generic"', 'base_url = "http://b.test/v1"', 'api_key_env = "B_KEY"', 'timeouts = { deadline_ms = 5000 }',
    '[providers.c]', 'preset = "generic"', 'base_url = "http://c.test/v1"', 'api_key_env = ""',
    '[providers.o]', 'preset = "openai"',
    '[upstream]', 'retries = 3',
    '[models.m]', 'provider = "a"', 'model = "same-model"', model,
  ].join('\n');

  it('lists the provider, then its fallbacks in order, each with its own address, key, headers and timeouts', () => {
    const route = resolveRoute(loadToml(toml('fallback = ["b", "c"]'), { A_KEY: 'ka', B_KEY: 'kb' }), 'm');
    expect(route.retries).toBe(3);
    expect(route.deployments).toEqual([
      { provider: 'a', baseUrl: 'http://a.test/v1', apiKey: 'ka', headers: { 'X-A': '1' }, timeouts: { connect_ms: 10_000, headers_ms: 300_000, body_ms: 300_000, deadline_ms: 600_000 } },
      { provider: 'b', baseUrl: 'http://b.test/v1', apiKey: 'kb', headers: {}, timeouts: { connect_ms: 10_000, headers_ms: 300_000, body_ms: 300_000, deadline_ms: 5000 } },
      { provider: 'c', baseUrl: 'http://c.test/v1', headers: {}, timeouts: { connect_ms: 10_000, headers_ms: 300_000, body_ms: 300_000, deadline_ms: 600_000 } },
    ]);
  });

  it('takes a route\'s own retries over [upstream], and a provider/model route has no fallback', () => {
    const config = loadToml(toml('retries = 0'), { A_KEY: 'ka' });
    expect(resolveRoute(config, 'm').retries).toBe(0);
    const direct = resolveRoute(config, 'b/whatever');
    expect(direct.retries).toBe(3);
    expect(direct.deployments.map((d) => d.provider)).toEqual(['b']);
  });

  it('refuses a fallback that is unknown, repeated, the provider itself, or of another preset', () => {
    expect(thrown(() => loadToml(toml('fallback = ["zz"]'))).message).toContain('models.m.fallback[0]: unknown provider "zz"');
    expect(thrown(() => loadToml(toml('fallback = ["a"]'))).message).toContain('models.m.fallback[0]: "a" is already a deployment of this model');
    expect(thrown(() => loadToml(toml('fallback = ["b", "b"]'))).message).toContain('models.m.fallback[1]: "b" is already a deployment of this model');
    expect(thrown(() => loadToml(toml('fallback = ["o"]'))).message).toContain('models.m.fallback[0]: "o" has preset openai; a fallback gets the same request bytes, so it needs the preset of "a" (generic)');
    expect(thrown(() => loadToml(toml('fallback = "b"'))).message).toContain('models.m.fallback: expected a list of provider names');
    expect(thrown(() => loadToml(toml('retries = -1'))).message).toContain('models.m.retries: expected an integer >= 0');
  });
});
