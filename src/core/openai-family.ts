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

/**
 * OpenAI's reasoning models: the o-series (o1, o3, o4-mini, ...) and gpt-5 and later, with or
 * without an `org/` prefix; not `gpt-5-chat` (a chat model). They refuse `max_tokens` ("Use
 * 'max_completion_tokens' instead") and, while they reason, the sampling fields (docs/wires.md,
 * OpenAI).
 */
const REASONING = /^(?:.*\/)?(?:o\d+(?:[.-]|$)|gpt-(?:5|[6-9]|\d{2,})(?:[.-]|$))/i;
const CHAT_VARIANT = /^(?:.*\/)?gpt-5-chat/i;

export function isOpenAIReasoningModel(model: string): boolean {
  return REASONING.test(model) && !CHAT_VARIANT.test(model);
}

/**
 * gpt-5.1 and later take `reasoning_effort: "none"`, their default, and then take the sampling
 * fields too (OpenAI, "Using GPT-5.1": temperature, top_p and logprobs only with effort none); the
 * o-series, the gpt-5 models before 5.1 and the codex models reason unless told otherwise.
 */
const REASONS_BY_DEFAULT = /^(?:.*\/)?(?:o\d+|gpt-5(?:-(?!chat)|$)|gpt-.*-codex)/i;

/** Whether a request with this effort (absent: the model's default) has the model reason. */
export function reasons(model: string, effort: string | undefined): boolean {
  if (!isOpenAIReasoningModel(model)) return false;
  if (REASONS_BY_DEFAULT.test(model)) return true;
  return effort !== undefined && effort !== 'none';
}
