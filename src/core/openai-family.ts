/**
 * OpenAI's GPT-5.6 and later (GPT-6 shares the contract): cache breakpoints and
 * `prompt_cache_options` (older models answer 400), writes billed at 1.25x input, and no
 * `prompt_cache_retention` (docs/decisions.md, OpenAI explicit breakpoints). One rule for the
 * config's defaults, the prices and the cache hints.
 */

/** gpt-5.6 and later, gpt-6 and later, with or without an `org/` prefix and a suffix (`-sol`, `-mini`). */
const FAMILY = /^(?:.*\/)?gpt-(?:5\.(?:[6-9]|\d{2,})|(?:[6-9]|\d{2,}))(?:[.-]|$)/i;

export function takesExplicitBreakpoints(model: string): boolean {
  return FAMILY.test(model);
}
