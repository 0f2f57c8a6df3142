/**
 * The cap a tool result is cut at (docs/decisions.md, Folds and per-tool caps). Before window-v3
 * every result has `max_result_tokens`. From window-v3 the first `tool_caps` entry whose pattern
 * matches the tool's whole name sets it (else `max_result_tokens`), and a whole-file read gets
 * twice that: an agent whose whole-file read lost its middle reads the middle again in ranges,
 * each a request that sends the whole context again. Compiled once per recipe.
 */
import type { Recipe } from '../core/events.js';
import { rulesOf } from './recipe.js';
import type { CallShape } from './tool-calls.js';

export class ResultCaps {
  readonly #base: number;
  readonly #byTool: { pattern: RegExp; cap: number }[];
  readonly #enabled: boolean;

  constructor(recipe: Recipe) {
    this.#base = recipe.max_result_tokens;
    this.#enabled = rulesOf(recipe.version).toolCaps;
    this.#byTool = this.#enabled ? (recipe.tool_caps ?? []).map((c) => ({ pattern: new RegExp(`^(?:${c.tools})$`), cap: c.max_result_tokens })) : [];
  }

  /** The cap of a result whose call is `of.call` (undefined: an orphaned result), read only from window-v3 on. */
  capOf(of: { readonly call: CallShape | undefined }): number {
    if (!this.#enabled) return this.#base;
    const shape = of.call;
    if (shape === undefined) return this.#base;
    const cap = this.#byTool.find((c) => c.pattern.test(shape.name))?.cap ?? this.#base;
    return shape.wholeRead ? cap * 2 : cap;
  }
}
