/**
 * The request parameters Anthropic names its own way: thinking (from the route's setting and the
 * client's `reasoning_effort`), `tool_choice`, stop sequences, and what thinking forbids beside it.
 */
import type { DialectRoute } from '../../core/route.js';
import type { RequestParams } from '../../core/types.js';
import { asObject, asString } from '../wire-read.js';
import { turnRole, type MessageBlocks } from './conversation.js';
import type { WireEffort, WireThinkingConfig, WireToolChoice } from './wire-types.js';

/** `reasoning_effort` -> `budget_tokens` when thinking is `enabled`. */
export const EFFORT_BUDGET: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
};

/** The API's floor for `budget_tokens`. */
export const MIN_THINKING_BUDGET = 1024;

const DEFAULT_EFFORT = 'medium';

const EFFORTS: Readonly<Record<string, WireEffort>> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'max' };

export interface ThinkingAsk {
  thinking?: WireThinkingConfig;
  /** `output_config.effort`, sent with adaptive thinking only. */
  effort?: WireEffort;
}

/**
 * What to ask for, first rule that applies:
 * 1. the route says `disabled`: nothing (the API's default is no thinking);
 * 2. the route says `adaptive`: `{type: adaptive}`, with the client's effort as `output_config.effort`;
 * 3. the route says `enabled`, or says nothing and the client named an effort other than `none`:
 *    `{type: enabled, budget_tokens}` from the effort (medium when none was named), capped below
 *    `max_tokens` as the API requires; when that leaves less than 1024, nothing (it would be a 400).
 */
export function thinkingFor(params: RequestParams, route: DialectRoute, maxTokens: number): ThinkingAsk {
  const effort = params.reasoning_effort;
  if (route.thinking === 'disabled') return {};
  if (route.thinking === 'adaptive') {
    const wireEffort = effort === undefined ? undefined : EFFORTS[effort];
    return wireEffort === undefined ? { thinking: { type: 'adaptive' } } : { thinking: { type: 'adaptive' }, effort: wireEffort };
  }
  if (route.thinking === undefined && (effort === undefined || EFFORT_BUDGET[effort] === undefined)) return {};
  const wanted = EFFORT_BUDGET[effort ?? DEFAULT_EFFORT] ?? (EFFORT_BUDGET[DEFAULT_EFFORT] as number);
  const budget = Math.min(wanted, maxTokens - 1);
  if (budget < MIN_THINKING_BUDGET) return {};
  return { thinking: { type: 'enabled', budget_tokens: budget } };
}

/**
 * True when the conversation ends inside a tool loop (its last turn holds tool results) and the
 * assistant turn those results answer does not start with a thinking or redacted_thinking block:
 * its reply went without its signed blocks (made before an elision, or by another origin). The API
 * refuses such a request when it asks for thinking ("When `thinking` is enabled, a final
 * `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use`
 * and `tool_result` blocks) ... To avoid this requirement, disable `thinking`."), so it goes
 * without. The reply it gets has no thinking block either, so the rest of the loop goes without
 * too, and thinking comes back with the next turn of the user's: one thinking configuration per
 * assistant turn, as the API asks (a tool loop is one turn).
 */
export function loopLacksThinking(turns: MessageBlocks): boolean {
  const { messages, leading } = turns;
  // The last turn: the messages at the end that are not the assistant's (empty ones go nowhere).
  let i = messages.length - 1;
  let last = false;
  let results = false;
  for (; i >= leading; i--) {
    const blocks = turns.of(i);
    if (blocks.length === 0) continue;
    if (turnRole(messages[i]!) === 'assistant') break;
    last = true;
    results ||= blocks.some((b) => b.type === 'tool_result');
  }
  if (!last || !results || i < leading) return false;
  // The turn before it, the assistant's: its first block is its earliest message's.
  let first: string | undefined;
  for (; i >= leading; i--) {
    const blocks = turns.of(i);
    if (blocks.length === 0) continue;
    if (turnRole(messages[i]!) !== 'assistant') break;
    first = blocks[0]!.type;
  }
  return first !== 'thinking' && first !== 'redacted_thinking';
}

/**
 * OpenAI's `tool_choice` and `parallel_tool_calls` -> Anthropic's `tool_choice`. `auto`, `none`,
 * `required` (-> `any`) and a named function (-> `tool`); `parallel_tool_calls: false` becomes
 * `disable_parallel_tool_use`. With thinking on, the API takes only `auto` and `none`, so a forced
 * choice falls back to `auto` there. Without tools nothing is sent (the API refuses a choice then).
 */
export function toolChoiceFor(params: RequestParams, hasTools: boolean, thinking: boolean): WireToolChoice | undefined {
  if (!hasTools) return undefined;
  let choice: WireToolChoice | undefined;
  const raw = params.tool_choice;
  const named = asString(asObject(asObject(raw)?.function)?.name);
  if (raw === 'auto') choice = { type: 'auto' };
  else if (raw === 'none') choice = { type: 'none' };
  else if (raw === 'required') choice = { type: 'any' };
  else if (named !== undefined) choice = { type: 'tool', name: named };

  if (thinking && choice !== undefined && (choice.type === 'any' || choice.type === 'tool')) choice = { type: 'auto' };
  if (params.parallel_tool_calls === false) {
    choice ??= { type: 'auto' };
    if (choice.type !== 'none') choice.disable_parallel_tool_use = true;
  }
  return choice;
}

/** `stop` -> `stop_sequences` (always a list). */
export function stopSequences(stop: string | string[] | undefined): string[] | undefined {
  if (stop === undefined) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  return list.length > 0 ? list : undefined;
}
