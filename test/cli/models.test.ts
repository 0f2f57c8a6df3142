/** `proxy models`: per route, the figures the proxy will use and where each came from. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelsReport, renderModels } from '../../src/cli/models.js';
import { loadConfig } from '../../src/config/load.js';
import { tempDir } from '../config/helpers.js';

function load(toml: string) {
  const dir = tempDir();
  writeFileSync(join(dir, 'config.toml'), toml);
  return loadConfig({ path: 'config.toml', env: {}, cwd: dir, now: new Date('2026-12-01T12:00:00Z') });
}

const config = load([
  '[providers.anthropic]', 'preset = "anthropic"', '[providers.ollama]', 'preset = "ollama"', '[providers.openai]', 'preset = "openai"',
  '[window]', 'output_reserve = 16000',
  '[models.opus]', 'provider = "anthropic"', 'model = "claude-opus-4-7"', 'price = { output = 20 }',
  '[models.local]', 'provider = "ollama"', 'model = "qwen3-coder:30b"', 'context = 65536',
].join('\n'));

describe('proxy models', () => {
  it('lists every [models] entry with each figure\'s source', () => {
    const report = modelsReport(config, []);
    expect(report.catalogue).toEqual({ name: '@pydantic/genai-prices', version: '0.1.8' });
    expect(report.routes.map((r) => r.route)).toEqual(['opus', 'local']);
    const [opus, local] = report.routes;
    expect(opus).toMatchObject({
      upstream: 'anthropic/claude-opus-4-7', catalogue: { provider: 'anthropic', model: 'claude-opus-4-7' },
      context: { value: 1_000_000, from: 'catalogue' }, output_reserve: { value: 16_000, from: 'window' }, priced: true,
      prices: { input: { value: 5, from: 'catalogue' }, output: { value: 20, from: 'config' } },
    });
    expect(local).toMatchObject({ catalogue: null, context: { value: 65536, from: 'config' }, prices: {}, priced: false });
  });

  it('renders sources and says unknown, never 0, for what neither config nor catalogue gives', () => {
    const text = renderModels(config, ['local', 'anthropic/claude-haiku-4-5']);
    expect(text).toContain('catalogue: @pydantic/genai-prices 0.1.8');
    expect(text).toMatch(/local -> ollama\/qwen3-coder:30b {3}\(not in the catalogue\)/);
    expect(text).toMatch(/ {2}input {10} {4}unknown {3}neither config nor catalogue/);
    expect(text).toContain('cost: unknown');
    expect(text).toMatch(/anthropic\/claude-haiku-4-5 -> anthropic\/claude-haiku-4-5 {3}\(catalogue: anthropic claude-haiku-4-5\)/);
    expect(text).toMatch(/context +200,000 {3}catalogue \(@pydantic\/genai-prices 0\.1\.8\)/);
    expect(text).toMatch(/output reserve +16,000 {3}\[window\]/);
    expect(text).not.toMatch(/\b0\.00\b| 0 {3}/);
  });

  it('says where OpenAI breakpoints are placed: GPT-5.6+ on OpenAI, nowhere else', () => {
    const byRoute = Object.fromEntries(modelsReport(config, ['openai/gpt-5.6', 'openai/gpt-5.5', 'opus']).routes.map((r) => [r.route, r.breakpoints]));
    expect(byRoute).toEqual({ 'openai/gpt-5.6': 'implicit', 'openai/gpt-5.5': 'off', opus: 'off' });
    const text = renderModels(config, ['openai/gpt-5.6', 'openai/gpt-5.5']);
    expect(text.match(/breakpoints +implicit/g)).toHaveLength(1);
  });

  it('says whether the proxy caps a route\'s output, and in which field', () => {
    const plain = load(['[providers.openai]', 'preset = "openai"', '[providers.anthropic]', 'preset = "anthropic"'].join('\n'));
    const caps = Object.fromEntries(modelsReport(plain, ['openai/gpt-5.1', 'anthropic/claude-opus-4-7']).routes.map((r) => [r.route, [r.output_cap, r.max_tokens_field]]));
    expect(caps).toEqual({ 'openai/gpt-5.1': ['client', 'max_completion_tokens'], 'anthropic/claude-opus-4-7': ['reserve', null] });
    expect(renderModels(plain, ['openai/gpt-5.1'])).toMatch(/output cap +client {3}the client's own limit as max_completion_tokens; none added/);
    // [window] output_reserve set: every route caps there.
    expect(renderModels(config, ['openai/gpt-5.1'])).toMatch(/output cap +reserve {3}every request, at the output reserve as max_completion_tokens/);
  });
});
