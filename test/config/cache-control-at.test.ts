import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { resolveRoute } from '../../src/config/routes.js';

function load(toml: string) {
  const dir = mkdtempSync(join(tmpdir(), 'pp-cc-at-'));
  writeFileSync(join(dir, 'config.toml'), toml);
  return loadConfig({ path: 'config.toml', env: {}, cwd: dir });
}

describe('cache_control_at', () => {
  it('chooses top-level cache_control on an Anthropic route when asked, explicit breakpoints by default', () => {
    const config = load(`
[providers.an]
preset = "anthropic"
base_url = "http://127.0.0.1:9/v1"
api_key_env = ""
[models.bp]
provider = "an"
model = "claude"
cache_control = "ephemeral"
[models.top]
provider = "an"
model = "claude"
cache_control_at = "top-level"
`);
    expect(resolveRoute(config, 'bp').topLevelCacheControl).toBe(false);
    expect(resolveRoute(config, 'top').topLevelCacheControl).toBe(true);
  });

  it('is refused, naming the key, on a wire that takes only the top-level form', () => {
    expect(() => load(`
[providers.or]
preset = "openrouter"
api_key_env = ""
[models.claude]
provider = "or"
model = "anthropic/claude-sonnet-4.6"
cache_control_at = "breakpoints"
`)).toThrow(/config\.toml: models\.claude\.cache_control_at: "breakpoints" needs a provider on the Anthropic Messages wire/);
  });
});
