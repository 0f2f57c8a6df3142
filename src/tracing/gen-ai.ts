/**
 * Span attributes from the OpenTelemetry GenAI semantic conventions (semantic-conventions 1.45,
 * incubating: gen_ai.*), and the proxy's own under `prefix_proxy.*`. Pure: figures in, attributes
 * out. Never a prompt or a credential: content is added only by `contentAttributes`, which the
 * caller uses when `[tracing] capture_content` is on.
 */
import type { Attributes } from '@opentelemetry/api';
import {
  ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_PROVIDER_NAME, ATTR_GEN_AI_REQUEST_MAX_TOKENS, ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS, ATTR_GEN_AI_SYSTEM, ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, ATTR_GEN_AI_USAGE_INPUT_TOKENS, ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
} from './semconv.js';
import type { Usage } from '../core/types.js';

export const OPERATION = 'chat';

/** What a request asked for, once its route is known. `provider` is the conventions' provider name. */
export function requestAttributes(provider: string, model: string, route: string): Attributes {
  return {
    [ATTR_GEN_AI_OPERATION_NAME]: OPERATION,
    // gen_ai.system was renamed gen_ai.provider.name; both are set for the backends that read the old one.
    [ATTR_GEN_AI_SYSTEM]: provider,
    [ATTR_GEN_AI_PROVIDER_NAME]: provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: model,
    'prefix_proxy.route': route,
  };
}

/** What the request sent upstream carried besides its model: its output limit, when it had one. */
export function sentAttributes(maxTokens: number | undefined): Attributes {
  return maxTokens === undefined ? {} : { [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: maxTokens };
}

/** The usage a reply reported; unknown figures are left out, never written as 0. */
export function usageAttributes(usage: Usage | undefined, finish: string | null): Attributes {
  const out: Attributes = {};
  if (finish !== null) out[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [finish];
  if (usage === undefined) return out;
  if (usage.prompt_tokens !== undefined) out[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = usage.prompt_tokens;
  if (usage.completion_tokens !== undefined) out[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = usage.completion_tokens;
  if (usage.cached_tokens !== undefined) out[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cached_tokens;
  if (usage.cache_write_tokens !== undefined) out[ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write_tokens;
  if (usage.reasoning_tokens !== undefined) out[ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = usage.reasoning_tokens;
  return out;
}

/** The proxy's view of the prefix: why it broke (or `none`), and how much of the predecessor's prompt the provider read. */
export function prefixAttributes(cause: string | undefined, cached: number | undefined, previousPrompt: number | undefined): Attributes {
  const out: Attributes = {};
  if (cause !== undefined) out['prefix_proxy.break_cause'] = cause;
  if (cached !== undefined && previousPrompt !== undefined && previousPrompt > 0) out['prefix_proxy.prefix_reuse'] = Math.min(1, cached / previousPrompt);
  return out;
}

/** Content, only with `capture_content`: the conventions' message attributes, as JSON (redacted as the log holds it). */
export function contentAttributes(input: unknown, output: unknown): Attributes {
  return { 'gen_ai.input.messages': JSON.stringify(input), 'gen_ai.output.messages': JSON.stringify(output) };
}
