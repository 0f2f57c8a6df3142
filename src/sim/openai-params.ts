/**
 * Request parameters an upstream refuses outright, as its own documentation and error texts say
 * (docs/wires.md keeps the table this file enforces; written apart from the proxy's rules so one
 * mistake is not made on both sides):
 * - OpenAI's reasoning models (o-series, gpt-5 and later but `gpt-5-chat`) refuse `max_tokens` on
 *   the chat wire ("Use 'max_completion_tokens' instead"), and while they reason every sampling
 *   field: `temperature` and `top_p` other than 1, the penalties other than 0, `logprobs`,
 *   `top_logprobs`, `logit_bias`. gpt-5.1 and later do not reason unless asked (their default
 *   effort is `none`); the o-series, gpt-5 before 5.1 and the codex models always do.
 * - DeepSeek's reasoning model: `logprobs` and `top_logprobs`.
 */
import { invalidRequest, type SimError } from './errors.js';

const REASONING_MODEL = /^(?:[^/]*\/)*(?:o[1-9]\d*|gpt-(?:5|[6-9]|[1-9]\d+))(?:[.-].*)?$/i;
const CHAT_MODEL = /^(?:[^/]*\/)*gpt-5-chat/i;
const ALWAYS_REASONS = /^(?:[^/]*\/)*(?:o[1-9]\d*(?:-.*)?|gpt-5(?:-.*)?|gpt-.*-codex.*)$/i;

const DEFAULTS: Readonly<Record<string, number>> = { temperature: 1, top_p: 1, presence_penalty: 0, frequency_penalty: 0 };
const NEVER_WHILE_REASONING = ['logprobs', 'top_logprobs', 'logit_bias'];

function reasoningModel(model: string): boolean {
  return REASONING_MODEL.test(model) && !CHAT_MODEL.test(model);
}

function reasonsNow(model: string, effort: unknown): boolean {
  if (!reasoningModel(model)) return false;
  if (typeof effort === 'string') return effort !== 'none' || ALWAYS_REASONS.test(model);
  return ALWAYS_REASONS.test(model);
}

function unsupportedParameter(name: string, extra = ''): SimError {
  return invalidRequest(`Unsupported parameter: '${name}' is not supported with this model.${extra}`, name, 'unsupported_parameter');
}

/** OpenAI's Chat Completions, as its reasoning models answer. */
export function checkOpenAIChatParams(body: Record<string, unknown>, model: string): void {
  if (!reasoningModel(model)) return;
  if (body.max_tokens !== undefined && body.max_tokens !== null) {
    throw unsupportedParameter('max_tokens', " Use 'max_completion_tokens' instead.");
  }
  if (!reasonsNow(model, body.reasoning_effort)) return;
  for (const [name, value] of Object.entries(DEFAULTS)) {
    const got = body[name];
    if (got === undefined || got === null || got === value) continue;
    throw invalidRequest(
      `Unsupported value: '${name}' does not support ${JSON.stringify(got)} with this model. Only the default (${value}) value is supported.`,
      name,
      'unsupported_value',
    );
  }
  for (const name of NEVER_WHILE_REASONING) {
    const got = body[name];
    if (got !== undefined && got !== null && got !== false) throw unsupportedParameter(name);
  }
}

/** OpenAI's Responses, as its reasoning models answer: no sampling fields while reasoning. */
export function checkOpenAIResponsesParams(body: Record<string, unknown>, model: string): void {
  const reasoning = body.reasoning;
  const effort = typeof reasoning === 'object' && reasoning !== null ? (reasoning as Record<string, unknown>).effort : undefined;
  if (!reasonsNow(model, effort)) return;
  for (const name of ['temperature', 'top_p', 'top_logprobs']) {
    const got = body[name];
    if (got !== undefined && got !== null && got !== DEFAULTS[name]) throw unsupportedParameter(name);
  }
}

/** DeepSeek's reasoning model ("Setting logprobs, top_logprobs will trigger an error"). */
export function checkDeepSeekParams(body: Record<string, unknown>): void {
  for (const name of ['logprobs', 'top_logprobs']) {
    if (body[name] !== undefined && body[name] !== null) {
      throw invalidRequest(`${name} is not supported by the reasoning model.`, name, 'unsupported_parameter');
    }
  }
}
