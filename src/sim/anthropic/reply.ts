/**
 * A reply plan as Anthropic's wire: the content blocks (a signed thinking block first when the
 * request asked for thinking, then text, then tool_use), the `message` body, and the SSE events
 * in the API's order: message_start (input and cache usage), per block content_block_start, its
 * deltas (text_delta, thinking_delta then one signature_delta, input_json_delta) and
 * content_block_stop, a ping after the first block starts, message_delta (stop reason,
 * cumulative usage), message_stop. A `[[stream-error]]` stream ends with an error event instead.
 */
import { sha256Hex } from '../hash.js';
import type { ReplyPlan } from '../replies.js';
import type { CacheUsage } from './prompt-cache.js';
import { renderReplyTurn, type Segment } from './render.js';
import type { Block } from './request.js';
import { SignatureChain } from './signature.js';

const TEXT_PIECE = 16;
const ARGS_PIECE = 12;

export interface ReplyMeta {
  id: string;
  model: string;
  /** `input_transformations` (block-binding.ts); absent unless the request sent the beta. */
  inputTransformations?: Record<string, unknown>[] | undefined;
}

/** The reply's blocks, each thinking block signed over the request and the blocks before it. */
export function replyBlocks(plan: ReplyPlan, digest: string, request: readonly Segment[]): Block[] {
  const blocks: Block[] = [];
  if (plan.thinking !== null) blocks.push({ type: 'thinking', thinking: plan.thinking, signature: '' });
  if (plan.content !== null) blocks.push({ type: 'text', text: plan.content });
  plan.toolCalls.forEach((call, i) => {
    const parsed = parseArgs(call.arguments);
    const input = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
    blocks.push({ type: 'tool_use', id: `toolu_${sha256Hex(`${digest}:${i}`).slice(0, 24)}`, name: call.name, input });
  });
  // The request's closing trailer leads the reply turn's first segment (renderReplyTurn), as it will
  // when the reply comes back: it belongs to that segment, not to the prefix before it.
  const chain = new SignatureChain();
  for (const segment of request) if (segment.boundary) chain.add(segment);
  const turn = renderReplyTurn(request, blocks);
  blocks.forEach((block, j) => {
    if (block.type === 'thinking') block.signature = chain.sign(String(block.thinking));
    chain.add(turn[j]!);
  });
  return blocks;
}

export function wireUsage(cache: CacheUsage, plan: ReplyPlan): Record<string, unknown> {
  return {
    input_tokens: cache.input,
    cache_creation_input_tokens: cache.written5m + cache.written1h,
    cache_read_input_tokens: cache.read,
    cache_creation: { ephemeral_5m_input_tokens: cache.written5m, ephemeral_1h_input_tokens: cache.written1h },
    output_tokens: plan.completionTokens,
    output_tokens_details: { thinking_tokens: plan.reasoningTokens },
    service_tier: 'standard',
  };
}

export function stopReason(plan: ReplyPlan): 'tool_use' | 'end_turn' {
  return plan.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

export function messageObject(meta: ReplyMeta, blocks: readonly Block[], plan: ReplyPlan, usage: Record<string, unknown>): Record<string, unknown> {
  const message: Record<string, unknown> = {
    id: meta.id, type: 'message', role: 'assistant', model: meta.model, content: blocks,
    stop_reason: stopReason(plan), stop_sequence: null, usage,
  };
  if (meta.inputTransformations !== undefined) message.input_transformations = meta.inputTransformations;
  return message;
}

/** `event: TYPE\ndata: JSON\n\n` frames. With `failure`, the stream breaks after half the text. */
export function streamFrames(meta: ReplyMeta, blocks: readonly Block[], plan: ReplyPlan, usage: Record<string, unknown>, failure: Record<string, unknown> | null): string[] {
  const out: string[] = [];
  // Each event's `event:` line names its data's `type`, as the API writes them.
  const emit = (data: Record<string, unknown>): void => {
    out.push(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  // message_start: input and cache figures, an early output count, no output breakdown yet, and
  // `input_transformations` in full (the final message_delta repeats it only after a model fallback).
  const startUsage: Record<string, unknown> = { ...usage, output_tokens: 1 };
  delete startUsage.output_tokens_details;
  emit({ type: 'message_start', message: { ...messageObject(meta, [], plan, startUsage), stop_reason: null } });

  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]!;
    const delta = (d: Record<string, unknown>): void => emit({ type: 'content_block_delta', index, delta: d });
    if (block.type === 'thinking') {
      emit({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of pieces(String(block.thinking), TEXT_PIECE)) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'text') {
      emit({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      const text = pieces(String(block.text), TEXT_PIECE);
      if (failure !== null) {
        for (const piece of text.slice(0, Math.max(1, Math.ceil(text.length / 2)))) delta({ type: 'text_delta', text: piece });
        emit(failure);
        return out;
      }
      for (const piece of text) delta({ type: 'text_delta', text: piece });
    } else {
      emit({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const piece of pieces(JSON.stringify(block.input), ARGS_PIECE)) delta({ type: 'input_json_delta', partial_json: piece });
    }
    if (index === 0) out.push('event: ping\ndata: {"type": "ping"}\n\n');
    emit({ type: 'content_block_stop', index });
  }
  if (failure !== null) {
    emit(failure);
    return out;
  }
  const { input_tokens: input, cache_creation_input_tokens: written, cache_read_input_tokens: read, output_tokens: output, output_tokens_details: details } = usage;
  emit({
    type: 'message_delta',
    delta: { stop_reason: stopReason(plan), stop_sequence: null },
    usage: { input_tokens: input, cache_creation_input_tokens: written, cache_read_input_tokens: read, output_tokens: output, output_tokens_details: details },
  });
  emit({ type: 'message_stop' });
  return out;
}

/** Splits by code points, so no piece ends inside a surrogate pair. */
function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out.length > 0 ? out : [''];
}

/** A directive's arguments as the object `input` must be (anything else becomes `{}`). */
function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
