/**
 * A Messages reply -> NeutralReply. `replyFromContent` is the one conversion: a non-stream body's
 * `content` goes through it, and so does the content array the stream decoder assembles, which is
 * how a streamed reply comes out equal to the same reply sent whole.
 */
import { ProxyError } from '../../core/errors.js';
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, OpaqueBlock, ToolCall, Usage } from '../../core/types.js';
import { toProxyError, upstreamErrorFromJson } from '../upstream-error.js';
import { asArray, asNonEmptyString, asObject, asString } from '../wire-read.js';
import { usageFromWire } from './usage.js';

const FINISH: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // A paused server-tool turn ended as far as the client can tell.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** Unknown reasons read as `stop`: the reply did end. */
export function finishReasonFrom(raw: unknown): FinishReason | null {
  const text = asString(raw);
  if (text === undefined) return null;
  return FINISH[text] ?? 'stop';
}

/** Shown thinking: the non-empty thinking blocks' text, a blank line between blocks. */
export const THINKING_SEPARATOR = '\n\n';

/** `input` as the arguments text: an object is serialised once; a string (an unparsable stream) is kept. */
export function argumentsText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input === undefined || input === null) return '{}';
  return JSON.stringify(input);
}

export interface ReplyParts {
  content: readonly unknown[];
  finishReason: FinishReason | null;
  usage: Usage | undefined;
  model: string | undefined;
  /** Thinking blocks of the request the API dropped (`droppedBlocks`), if it said. */
  dropped?: number;
}

/**
 * How many of the request's thinking blocks the API says it dropped: `input_transformations`
 * entries of type `thinking_dropped` (a `block_binding` request, docs/decisions/0009); undefined
 * when the field is absent.
 */
export function droppedBlocks(transformations: unknown): number | undefined {
  const list = asArray(transformations);
  if (list === undefined) return undefined;
  return list.filter((t) => asObject(t)?.type === 'thinking_dropped').length;
}

/**
 * Text blocks join into `content`; `tool_use` blocks become calls; thinking and redacted_thinking
 * blocks are kept whole (signature and all) as opaque blocks of this route's origin, each with the
 * number of calls before it. Server-tool blocks and later block types are not read.
 */
export function replyFromContent(parts: ReplyParts, route: DialectRoute): NeutralReply {
  const origin = { provider: route.provider, model: route.model };
  const blocks: OpaqueBlock[] = [];
  const calls: ToolCall[] = [];
  const thinking: string[] = [];
  let text = '';

  for (const raw of parts.content) {
    const block = asObject(raw);
    if (block === undefined) continue;
    switch (block.type) {
      case 'text':
        text += asString(block.text) ?? '';
        break;
      case 'thinking': {
        blocks.push({ kind: 'anthropic.thinking', origin, data: block, before_call: calls.length });
        const said = asNonEmptyString(block.thinking);
        if (said !== undefined) thinking.push(said);
        break;
      }
      case 'redacted_thinking':
        blocks.push({ kind: 'anthropic.redacted_thinking', origin, data: block, before_call: calls.length });
        break;
      case 'tool_use':
        calls.push({ id: asString(block.id) ?? `toolu_${calls.length}`, name: asString(block.name) ?? '', arguments: argumentsText(block.input) });
        break;
      default:
        break;
    }
  }

  const reply: NeutralReply = { content: text.length > 0 ? text : null, finish_reason: parts.finishReason };
  if (thinking.length > 0) reply.thinking = thinking.join(THINKING_SEPARATOR);
  if (blocks.length > 0) reply.blocks = blocks;
  if (calls.length > 0) reply.tool_calls = calls;
  if (parts.usage !== undefined) reply.usage = parts.usage;
  if (parts.model !== undefined) reply.model = parts.model;
  if (parts.dropped !== undefined && parts.dropped > 0) reply.dropped_blocks = parts.dropped;
  return reply;
}

export function decodeReply(status: number, body: unknown, route: DialectRoute): NeutralReply {
  const top = asObject(body);
  if (top === undefined) {
    throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the body is not a JSON object' });
  }
  if (top.type === 'error') throw toProxyError(status, upstreamErrorFromJson(top, `HTTP ${status}`));
  const content = asArray(top.content);
  if (content === undefined) {
    throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the reply has no content array' });
  }
  return replyFromContent(
    { content, finishReason: finishReasonFrom(top.stop_reason), usage: usageFromWire(top.usage), model: asNonEmptyString(top.model), dropped: droppedBlocks(top.input_transformations) },
    route,
  );
}
