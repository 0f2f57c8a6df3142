/**
 * The model catalogue as a route's default: real model ids across presets get the catalogue's
 * context and prices when the config names none, the config wins where it names one, and the
 * window's water marks follow the context. Figures are those of the pinned catalogue version.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { resolveRoute } from '../../src/config/routes.js';
import type { Config } from '../../src/config/types.js';
import { CATALOGUE, lookupCatalogue } from '../../src/pricing/catalogue.js';
import { tempDir, thrown } from '../config/helpers.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const PROVIDERS = ['openai', 'anthropic', 'openrouter', 'deepseek', 'groq', 'gemini-openai', 'xai', 'cerebras', 'fireworks', 'ollama']
  .map((p) => `[providers.${p}]\npreset = "${p}"`).join('\n');

function load(toml: string, now = NOW): Config {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.toml'), `${PROVIDERS}\n${toml}`);
  return loadConfig({ path: 'config.toml', env: {}, cwd: dir, now });
}

/** Water marks at the default output reserve: 80% and 50% of (context - 8192). */
const marks = (context: number) => ({ context, output_reserve: 8192, high_water: Math.floor((context - 8192) * 0.8), low_water: Math.floor((context - 8192) * 0.5) });

// [preset, upstream model id, the catalogue entry it matches, context, prices]
const CASES: [string, string, string, number, Record<string, number>][] = [
  ['openai', 'gpt-5-mini', 'gpt-5-mini', 400_000, { input: 0.25, cache_read: 0.025, output: 2 }],
  ['openai', 'gpt-5.5', 'gpt-5.5', 1_000_000, { input: 5, cache_read: 0.5, output: 30 }], // tiered: the base price
  ['anthropic', 'claude-sonnet-4-6', 'claude-sonnet-4-6', 1_000_000, { input: 3, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6, output: 15 }],
  ['anthropic', 'claude-haiku-4-5-20251001', 'claude-haiku-4-5', 200_000, { input: 1, cache_read: 0.1, cache_write: 1.25, cache_write_1h: 2, output: 5 }],
  ['openrouter', 'anthropic/claude-sonnet-4.6', 'anthropic/claude-sonnet-4.6', 1_000_000, { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 }],
  ['deepseek', 'deepseek-v4-pro', 'deepseek-v4-pro', 1_000_000, { input: 0.66, cache_read: 0.022, output: 1.98 }],
  ['groq', 'openai/gpt-oss-120b', 'openai/gpt-oss-120b', 131_072, { input: 0.15, cache_read: 0.075, output: 0.6 }],
  ['gemini-openai', 'gemini-3.5-flash', 'gemini-3.5-flash', 1_000_000, { input: 1.5, cache_read: 0.15, output: 9 }],
  ['xai', 'grok-code-fast-1', 'grok-code-fast-1', 256_000, { input: 0.2, cache_read: 0.02, output: 1.5 }],
  ['cerebras', 'zai-glm-4.7', 'zai-glm-4.7', 131_072, { input: 2.25, output: 2.75 }],
  ['fireworks', 'accounts/fireworks/models/glm-4p7', 'glm-4p7', 202_752, { input: 0.6, output: 2.2 }], // org/ prefix dropped
];

describe('the model catalogue as the default', () => {
  it('names the installed catalogue package and version', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../node_modules/@pydantic/genai-prices/package.json'), 'utf8')) as { name: string; version: string };
    expect({ name: pkg.name, version: pkg.version }).toEqual(CATALOGUE);
  });

  it.each(CASES)('%s %s: context, prices and water marks from the catalogue', (preset, model, matched, context, prices) => {
    const config = load(`[models.m]\nprovider = "${preset}"\nmodel = "${model}"`);
    const route = resolveRoute(config, 'm');
    expect(route.figures.catalogue?.model).toBe(matched);
    expect(route.figures.context).toEqual({ value: context, from: 'catalogue' });
    expect(route.price).toEqual(prices);
    for (const figure of Object.values(route.figures.prices)) expect(figure.from).toBe('catalogue');
    expect(route.recipe).toMatchObject(marks(context));
    // The same model named provider/model, with no [models] entry, gets the same figures.
    const direct = resolveRoute(config, `${preset}/${model}`);
    expect(direct.price).toEqual(prices);
    expect(direct.recipe).toMatchObject(marks(context));
    expect(direct.label).toBe(`${preset}/${matched}`);
  });

  it('leaves a model the catalogue lacks at the [window] context (else the default) with its cost unknown, never 0', () => {
    const config = load('[models.local]\nprovider = "ollama"\nmodel = "qwen3-coder:30b"');
    const route = resolveRoute(config, 'local');
    expect(route.figures).toMatchObject({ context: { value: 131_072, from: 'default' }, prices: {} });
    expect(route.price).toBeUndefined();
    expect(route.dialect.numCtx).toBe(131_072);
    const windowed = load('[window]\ncontext = 32768\n[models.local]\nprovider = "ollama"\nmodel = "qwen3-coder:30b"');
    expect(resolveRoute(windowed, 'local').figures.context).toEqual({ value: 32768, from: 'window' });
    // A model the catalogue knows keeps its own context over [window]'s.
    expect(resolveRoute(windowed, 'openai/gpt-5-mini').recipe.context).toBe(400_000);
  });

  it('lets each config figure win over the catalogue, and the water marks follow the config context', () => {
    const config = load([
      '[models.m]', 'provider = "anthropic"', 'model = "claude-sonnet-4-6"', 'context = 300000', 'output_reserve = 16000',
      'price = { input = 2.5, cache_write_1h = 5 }',
    ].join('\n'));
    const route = resolveRoute(config, 'm');
    expect(route.figures.context).toEqual({ value: 300_000, from: 'config' });
    expect(route.figures.outputReserve).toEqual({ value: 16_000, from: 'config' });
    expect(route.figures.prices).toEqual({
      input: { value: 2.5, from: 'config' }, cache_read: { value: 0.3, from: 'catalogue' }, cache_write: { value: 3.75, from: 'catalogue' },
      cache_write_1h: { value: 5, from: 'config' }, output: { value: 15, from: 'catalogue' },
    });
    expect(route.price).toEqual({ input: 2.5, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 5, output: 15 });
    expect(route.recipe).toMatchObject({ context: 300_000, output_reserve: 16_000, high_water: Math.floor(284_000 * 0.8), low_water: 142_000 });
  });

  it('refuses part of a price for a model the catalogue does not price, naming the key', () => {
    const err = thrown(() => load('[models.local]\nprovider = "ollama"\nmodel = "qwen3-coder:30b"\nprice = { input = 0.1 }'));
    expect(err.message).toContain('models.local.price.output: missing; the catalogue has no output price for "qwen3-coder:30b"');
  });

  it('takes the price in force by date when the config loads, and the standard price at any hour', () => {
    const before = load('[models.m]\nprovider = "deepseek"\nmodel = "deepseek-v4-pro"', new Date('2026-08-01T12:00:00Z'));
    expect(resolveRoute(before, 'm').price).toEqual({ input: 0.435, cache_read: 0.003625, output: 0.87 });
    // DeepSeek's off-peak hours (01:00-04:00 UTC) change nothing: a route's prices are fixed at load.
    expect(lookupCatalogue('deepseek', 'deepseek-v4-pro', new Date('2026-12-01T02:00:00Z'))?.price)
      .toEqual(lookupCatalogue('deepseek', 'deepseek-v4-pro', NOW)?.price);
  });

  it('matches nothing at a provider the model is not sold by, and nothing for a made-up id', () => {
    expect(lookupCatalogue('anthropic', 'gpt-5-mini', NOW)).toBeUndefined();
    expect(lookupCatalogue('openrouter', 'nobody/unheard-of-7b', NOW)).toBeUndefined();
  });
});
