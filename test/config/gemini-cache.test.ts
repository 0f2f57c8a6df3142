/** `gemini_cache` and the storage price: explicit only on Gemini's own wire; storage unknown unless configured. */
import { describe, expect, it } from 'vitest';
import { resolveRoute } from '../../src/config/routes.js';
import { storageCostOf } from '../../src/pricing/cost.js';
import { loadToml, thrown } from './helpers.js';

const providers = `
[providers.gm]
preset = "gemini"
base_url = "http://127.0.0.1:9/v1beta"
api_key_env = ""
[providers.oa]
preset = "generic"
base_url = "http://127.0.0.1:9/v1"
`;

describe('gemini_cache', () => {
  it('is implicit unless a Gemini route asks for explicit', () => {
    const config = loadToml(`${providers}
[models.plain]
provider = "gm"
model = "gemini-2.5-flash"
[models.held]
provider = "gm"
model = "gemini-2.5-flash"
gemini_cache = "explicit"
`);
    expect(resolveRoute(config, 'plain').geminiCache).toBeUndefined();
    expect(resolveRoute(config, 'held').geminiCache).toBe('explicit');
  });

  it('refuses explicit on another wire, naming the key', () => {
    const err = thrown(() => loadToml(`${providers}
[models.bad]
provider = "oa"
model = "m"
gemini_cache = "explicit"
`));
    expect(err.message).toMatch(/models\.bad\.gemini_cache.*Gemini's own API/s);
  });

  it('prices storage per million token-hours from the config, unknown (never 0) without it', () => {
    const config = loadToml(`${providers}
[models.priced]
provider = "gm"
model = "gemini-2.5-flash"
price = { input = 0.3, output = 2.5, cache_read = 0.03, cache_storage = 1 }
[models.unpriced]
provider = "gm"
model = "gemini-2.5-flash"
price = { input = 0.3, output = 2.5 }
`);
    const priced = resolveRoute(config, 'priced');
    expect(priced.figures.storage).toStrictEqual({ value: 1, from: 'config' });
    expect(storageCostOf(priced.price, 2_000_000)).toBeCloseTo(2, 9);
    expect(storageCostOf(resolveRoute(config, 'unpriced').price, 2_000_000)).toBeUndefined();
  });
});
