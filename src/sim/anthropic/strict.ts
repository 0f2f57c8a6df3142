/**
 * The rules the Messages API enforces that a gateway can break, each a 400 with the API's wording
 * where known (Anthropic's Messages API reference): at most four `cache_control` markers (the
 * request's own counts), well-formed markers, `tool_use` ids unique, every `tool_result` answering
 * a `tool_use` of the assistant turn right before it, every `tool_use` answered in the next turn,
 * and thinking's own limits (a budget of at least 1024 below `max_tokens`; no temperature other
 * than 1; inside a tool loop, the last assistant turn starts with a thinking block). Signatures:
 * signature.ts.
 */
import { isObject } from '../request.js';
import { invalid } from './errors.js';
import { thinks, type MessagesRequest } from './request.js';
import type { Segment } from './render.js';

export const MAX_CACHE_MARKERS = 4;

export function checkMessagesRequest(req: MessagesRequest, segments: readonly Segment[]): void {
  checkCacheMarkers(req, segments);
  checkThinking(req);
  checkToolPairs(req);
  checkFinalThinking(req);
}

/** The number of `cache_control` markers the request carries, its own top-level one included. */
export function countCacheMarkers(req: MessagesRequest, segments: readonly Segment[]): number {
  return segments.filter((s) => s.cacheControl !== null).length + (req.topLevelCache === null ? 0 : 1);
}

function checkCacheMarkers(req: MessagesRequest, segments: readonly Segment[]): void {
  const found = countCacheMarkers(req, segments);
  if (found > MAX_CACHE_MARKERS) {
    throw invalid(`A maximum of ${MAX_CACHE_MARKERS} blocks with cache_control may be provided. Found ${found}.`);
  }
  const marked = segments.filter((s) => s.cacheControl !== null).map((s) => [s.where, s.cacheControl] as const);
  if (req.topLevelCache !== null) marked.push(['cache_control', req.topLevelCache]);
  for (const [where, cc] of marked) {
    if (!isObject(cc) || cc.type !== 'ephemeral') throw invalid(`${where}.cache_control.type: Input should be 'ephemeral'`);
    if (cc.ttl !== undefined && cc.ttl !== '5m' && cc.ttl !== '1h') throw invalid(`${where}.cache_control.ttl: Input should be '5m' or '1h'`);
  }
  const opaque = segments.find((s) => s.opaque && s.cacheControl !== null);
  if (opaque !== undefined) throw invalid(`${opaque.where}: thinking blocks cannot be marked with cache_control`);
}

function checkThinking(req: MessagesRequest): void {
  const t = req.thinking;
  if (t === null || t.type === 'disabled') return;
  if (t.type === 'enabled') {
    const budget = t.budget ?? 0;
    if (budget < 1024) throw invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (budget >= req.maxTokens) throw invalid('`max_tokens` must be greater than `thinking.budget_tokens`.');
  }
  if (req.temperature !== null && req.temperature !== 1) {
    throw invalid('`temperature` may only be set to 1 when thinking is enabled or adaptive.');
  }
  // "Thinking isn't compatible with temperature or top_k modifications as well as forced tool use."
  if (req.topK !== null) throw invalid('`top_k` may not be set when thinking is enabled or adaptive.');
  if (req.toolChoice === 'any' || req.toolChoice === 'tool') {
    throw invalid('Thinking may not be enabled when tool_choice forces tool use.');
  }
}

function checkToolPairs(req: MessagesRequest): void {
  checkUniqueToolUseIds(req);
  let pending: string[] = [];
  let caller = -1;
  req.messages.forEach((turn, i) => {
    const results = turn.role === 'user' ? turn.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id)) : [];
    const orphans = results.filter((id) => !pending.includes(id));
    if (orphans.length > 0) {
      throw invalid(
        `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${orphans.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      );
    }
    const unanswered = pending.filter((id) => !results.includes(id));
    if (unanswered.length > 0) {
      throw invalid(
        `messages.${caller}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
    pending = turn.role === 'assistant' ? turn.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : [];
    caller = i;
  });
}

/** Every `tool_use` id of the request is its own (a gateway that makes ids up can repeat one). */
function checkUniqueToolUseIds(req: MessagesRequest): void {
  const seen = new Set<string>();
  req.messages.forEach((turn, i) => {
    turn.content.forEach((b, j) => {
      if (b.type !== 'tool_use') return;
      const id = String(b.id);
      if (seen.has(id)) throw invalid(`messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
      seen.add(id);
    });
  });
}

/**
 * With thinking on, a request that ends inside a tool loop (its last turn holds tool results, so
 * the turn before it made the calls) must give that assistant turn back starting with its thinking
 * block. Checked after the tool pairs, which make sure the turn before the results is the caller.
 */
function checkFinalThinking(req: MessagesRequest): void {
  if (!thinks(req)) return;
  const i = req.messages.length - 2;
  const last = req.messages[i + 1];
  const caller = req.messages[i];
  if (last?.role !== 'user' || caller?.role !== 'assistant' || !last.content.some((b) => b.type === 'tool_result')) return;
  const first = caller.content[0]?.type;
  if (first === 'thinking' || first === 'redacted_thinking') return;
  throw invalid(
    `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first ?? 'nothing'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  );
}
