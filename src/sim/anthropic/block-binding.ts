/**
 * `thinking.block_binding`, Anthropic's control for thinking blocks that fail the prefix check
 * (https://platform.claude.com/docs/build-with-claude/preserved-thinking/prefix-checks): "error"
 * (the default, a 400) or "drop_block" (the failing blocks are left out of the prompt and listed in
 * the response's `input_transformations`). A beta: refused without its `anthropic-beta` value.
 */
import type { SimError } from '../errors.js';
import { isObject } from '../request.js';
import { invalid } from './errors.js';

export const BINDING_BETA = 'thinking-binding-controls-2026-08-01';

export type PrefixMismatch = 'error' | 'drop_block';

/** A thinking block left out of the prompt, by its indexes in the request as sent. */
export interface DroppedThinking {
  message: number;
  block: number;
}

/** The request's `thinking.block_binding`, checked as strictly as the rest of the body. */
export function parseBlockBinding(thinking: Record<string, unknown>, betas: readonly string[]): PrefixMismatch {
  const binding = thinking.block_binding;
  if (binding === undefined) return 'error';
  if (thinking.type === 'disabled') throw invalid('thinking.disabled.block_binding: Extra inputs are not permitted');
  if (!betas.includes(BINDING_BETA)) throw invalid(`thinking.block_binding: requires the beta header \`anthropic-beta: ${BINDING_BETA}\``);
  if (!isObject(binding)) throw invalid('thinking.block_binding: Input should be an object');
  const extra = Object.keys(binding).find((key) => key !== 'prefix_mismatch_behavior');
  if (extra !== undefined) throw invalid(`thinking.block_binding.${extra}: Extra inputs are not permitted`);
  const behavior = binding.prefix_mismatch_behavior;
  if (behavior === undefined) return 'error';
  if (behavior !== 'error' && behavior !== 'drop_block') {
    throw invalid(`thinking.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'`);
  }
  return behavior;
}

/** The API's 400 for a block that fails the prefix check, in the wording its docs quote. */
export function boundElsewhere(message: number, block: number): SimError {
  return invalid(
    `messages.${message}.content.${block}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`,
  );
}

/**
 * The response's `input_transformations`: with the beta, on every response (`[]` when nothing was
 * dropped); without it, absent. Entry shape from the SDKs generated from Anthropic's OpenAPI spec
 * (`BetaThinkingDroppedInputTransformation`: `type`, `path` "messages.{i}.content.{j}" as error
 * messages write it, `reason`); the prose docs name only the `thinking_dropped` type.
 */
export function inputTransformations(dropped: readonly DroppedThinking[], betas: readonly string[]): Record<string, unknown>[] | undefined {
  if (!betas.includes(BINDING_BETA)) return undefined;
  return dropped.map((d) => ({ type: 'thinking_dropped', path: `messages.${d.message}.content.${d.block}`, reason: 'prefix_binding_mismatch' }));
}
