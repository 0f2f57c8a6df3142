/**
 * The trimmed catalogue the proxy ships (src/pricing/catalogue-data.ts) against the package it
 * comes from: the file is what the generator writes from the installed version, it covers every
 * preset's provider, and for every model id the catalogue lists, in the shapes clients send, the
 * proxy's lookup finds the model the package's own `calcPrice` finds, at the same prices.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calcPrice, findProvider } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { PRESETS } from '../../src/config/presets.js';
import { CATALOGUE_JSON } from '../../src/pricing/catalogue-data.js';
import { lookupCatalogue } from '../../src/pricing/catalogue.js';
// @ts-expect-error: a plain .mjs script, no type declarations
import { catalogueData, catalogueModule } from '../../scripts/catalogue-data.mjs';

const ROOT = join(import.meta.dirname, '../..');
const AT = new Date('2026-12-01T12:00:00Z');
const data = JSON.parse(CATALOGUE_JSON) as { id: string; models: { id: string }[] }[];
const presetIds = [...new Set(Object.values(PRESETS).map((p) => (p as { catalogue?: string }).catalogue).filter((id) => id !== undefined))].sort();

describe('the trimmed catalogue', () => {
  it('is what scripts/catalogue-data.mjs writes from the installed package (else: npm run catalogue)', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules/@pydantic/genai-prices/package.json'), 'utf8')) as { version: string };
    const written = readFileSync(join(ROOT, 'src/pricing/catalogue-data.ts'), 'utf8');
    expect(written).toBe(catalogueModule(catalogueData(findProvider, presetIds), version));
  });

  it('holds every preset\'s provider', () => {
    for (const id of presetIds) expect(data.map((p) => p.id)).toContain(id);
  });

  it('finds what calcPrice finds for every listed id, dated, upper-cased and behind an org/ prefix', () => {
    let compared = 0;
    let matched = 0;
    for (const provider of data) {
      for (const model of provider.models) {
        for (const id of [model.id, model.id.toUpperCase(), `${model.id}-20250929`, `${model.id}-2025-09-29`, `someorg/${model.id}`, `${model.id}x`]) {
          const ours = lookupCatalogue(provider.id, id, AT);
          const theirs = packageLookup(provider.id, id);
          expect({ id, provider: provider.id, model: ours?.model }).toEqual({ id, provider: provider.id, model: theirs?.model });
          if (theirs !== undefined) {
            expect(ours?.provider).toBe(theirs.provider);
            matched++;
          }
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(5000);
    expect(matched).toBeGreaterThan(compared / 2);
  });

  it('finds what calcPrice finds for every listed id at every provider (fallbacks, ids sold elsewhere)', () => {
    let fromElsewhere = 0;
    for (const provider of data) {
      for (const other of data) {
        for (const model of other.models) {
          const ours = lookupCatalogue(provider.id, model.id, AT);
          const theirs = packageLookup(provider.id, model.id);
          expect({ id: model.id, at: provider.id, model: ours?.model }).toEqual({ id: model.id, at: provider.id, model: theirs?.model });
          if (other !== provider && theirs !== undefined) fromElsewhere++;
        }
      }
    }
    expect(fromElsewhere).toBeGreaterThan(100);
  });

  it('gives the package\'s context window and prices for each of its models', () => {
    for (const provider of data) {
      for (const model of provider.models) {
        const found = calcPrice({ input_tokens: 1_000_000, output_tokens: 1_000_000 }, model.id, { providerId: provider.id, timestamp: AT });
        const ours = lookupCatalogue(provider.id, model.id, AT);
        if (found === null || ours === undefined) continue;
        expect(ours.context).toBe(found.model.context_window);
        // Time-of-day prices are left out on purpose (a route's prices are fixed at load: catalogue.ts).
        if (Array.isArray(found.model.prices) && found.model.prices.some((p) => p.constraint?.type === 'time_of_date')) continue;
        // A tiered price is taken at its base, which a 1M-token prompt may be above: compare untiered ones.
        const input = found.model_price.input_mtok;
        const output = found.model_price.output_mtok;
        if (typeof input === 'number') expect(ours.price.input).toBe(input);
        if (typeof output === 'number') expect(ours.price.output).toBe(output);
      }
    }
  });
});

/** The package's answer by the proxy's documented rule: as given, undated, without an org/ prefix. */
function packageLookup(provider: string, model: string): { provider: string; model: string } | undefined {
  const undated = model.trim().replace(/-20\d{2}-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])$/, '');
  const slash = undated.lastIndexOf('/');
  for (const id of slash < 0 ? [model.trim(), undated] : [model.trim(), undated, undated.slice(slash + 1)]) {
    const found = calcPrice({}, id, { providerId: provider, timestamp: AT });
    if (found !== null) return { provider: found.provider.id, model: found.model.id };
  }
  return undefined;
}
