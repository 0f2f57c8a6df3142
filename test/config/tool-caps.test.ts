/** `[window] tool_caps` and `[window] folds`: checked at load, recorded in every new session's recipe. */
import { describe, expect, it } from 'vitest';
import { resolveRoute } from '../../src/config/routes.js';
import { loadToml, thrown } from './helpers.js';

const MODEL = `
[providers.oa]
preset = "generic"
base_url = "http://127.0.0.1:9/v1"

[models.m]
provider = "oa"
model = "x"
`;

describe('[window] tool_caps and folds', () => {
  it('records the caps as written, in order, and folds = false; neither when unset', () => {
    const config = loadToml(`${MODEL}
[window]
folds = false
tool_caps = [{ tools = "Read|read", max_result_tokens = 6000 }, { tools = "Bash", max_result_tokens = 1500 }]
`);
    expect(resolveRoute(config, 'm').recipe).toMatchObject({
      version: 'window-v4', folds: false,
      tool_caps: [{ tools: 'Read|read', max_result_tokens: 6000 }, { tools: 'Bash', max_result_tokens: 1500 }],
    });
    const plain = resolveRoute(loadToml(MODEL), 'm').recipe;
    expect(plain).not.toHaveProperty('tool_caps');
    expect(plain).not.toHaveProperty('folds');
  });

  it('names a pattern that does not compile, and a cap that is not a positive whole number', () => {
    const bad = thrown(() => loadToml(`${MODEL}\n[window]\ntool_caps = [{ tools = "Read(", max_result_tokens = 10 }]\n`));
    expect(bad.message).toContain('window.tool_caps[0].tools');
    expect(bad.message).toContain('not a regular expression');
    const zero = thrown(() => loadToml(`${MODEL}\n[window]\ntool_caps = [{ tools = "Read", max_result_tokens = 0 }]\n`));
    expect(zero.message).toContain('tool_caps');
    const missing = thrown(() => loadToml(`${MODEL}\n[window]\ntool_caps = [{ max_result_tokens = 10 }]\n`));
    expect(missing.message).toContain('tools');
  });
});
