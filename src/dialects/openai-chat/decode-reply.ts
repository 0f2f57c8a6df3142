/**
 * openai-chat reply -> NeutralReply. `replyFromMessage` is the one conversion: a non-stream body's
 * `choices[0].message` goes through it, and so does the message the stream decoder assembles, which
 * is how a streamed reply comes out equal to the same reply sent whole.
 */
import { ProxyError } from '../../core/errors.js';
import type { DialectRoute } from '../../core/route.js';
import type { FinishReason, NeutralReply, OpaqueBlock, ToolCall, Usage } from '../../core/types.js';
import { toProxyError, upstreamErrorFromJson } from '../upstream-error.js';
import { asArray, asNonEmptyString, asNumber, asObject, asString, type JsonObject } from '../wire-read.js';
import { thinkingFromDetails } from './reasoning-details.js';
import { usageFromWire } from './usage.js';

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  error: 'error',
  // Older and borrowed spellings some compatible servers still send.
  function_call: 'tool_calls',
  eos: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
};

/** Unknown reasons (a server's own words) read as `stop`: the reply did end. */
export function finishReasonFrom(raw: unknown): FinishReason | null {
  const text = asString(raw);
  if (text === undefined) return null;
  return FINISH[text] ?? 'stop';
}

/** A call without an id still needs one the tool result can name; the same rule stream and whole. */
export function fallbackCallId(position: number): string {
  return `call_${position}`;
}

/** `content` as text: a string, or the text parts of a parts array (some servers answer in parts). */
export function contentText(raw: unknown): string | undefined {
  const text = asString(raw);
  if (text !== undefined) return text;
  const parts = asArray(raw);
  if (parts === undefined) return undefined;
  let out = '';
  for (const p of parts) {
    const part = asObject(p);
    if (part !== undefined && part.type === 'text') out += asString(part.text) ?? '';
  }
  return out;
}

/** Tool-call arguments are kept as the exact text; an object (a non-conforming server) is serialised once. */
export function argumentsText(raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (raw === undefined || raw === null) return '';
  return JSON.stringify(raw);
}

export interface ReplyParts {
  /** `choices[0].message`, or the message the stream decoder assembled. */
  message: JsonObject | undefined;
  finishReason: FinishReason | null;
  usage: Usage | undefined;
  model: string | undefined;
}

/**
 * Reasoning text comes from `reasoning_content` or `reasoning` (whichever is non-empty); failing
 * both, from the readable items of `reasoning_details`. A non-empty `reasoning_details` array is
 * kept whole as one block (no `before_call`: it belongs to the message, not to a place among its
 * calls). A Gemini thought signature on `tool_calls[i]` becomes a block with `before_call: i`: the
 * number of calls before it, which is the index of the call it rides on.
 */
export function replyFromMessage(parts: ReplyParts, route: DialectRoute): NeutralReply {
  const m = parts.message ?? {};
  const origin = { provider: route.provider, model: route.model };
  const blocks: OpaqueBlock[] = [];

  const details = asArray(m.reasoning_details);
  const hasDetails = details !== undefined && details.length > 0;
  if (hasDetails) blocks.push({ kind: 'openrouter.reasoning_details', origin, data: details });
  const thinking =
    asNonEmptyString(m.reasoning_content) ?? asNonEmptyString(m.reasoning) ?? (hasDetails ? thinkingFromDetails(details) : undefined);

  const toolCalls: ToolCall[] = [];
  const rawCalls = asArray(m.tool_calls) ?? [];
  for (let i = 0; i < rawCalls.length; i++) {
    const call = asObject(rawCalls[i]) ?? {};
    const fn = asObject(call.function) ?? {};
    toolCalls.push({
      id: asNonEmptyString(call.id) ?? fallbackCallId(i),
      name: asString(fn.name) ?? '',
      arguments: argumentsText(fn.arguments),
    });
    const signature = asObject(asObject(call.extra_content)?.google)?.thought_signature;
    if (signature !== undefined && signature !== null) {
      // Gemini checks a signature on its call, not against the prefix: it survives an elision.
      blocks.push({ kind: 'gemini.thought_signature', origin, data: signature, before_call: i, unbound: true });
    }
  }

  // An empty content is no content: DeepSeek sends "" beside tool calls where OpenAI sends null.
  const reply: NeutralReply = { content: asNonEmptyString(contentText(m.content)) ?? null, finish_reason: parts.finishReason };
  if (thinking !== undefined) reply.thinking = thinking;
  if (blocks.length > 0) reply.blocks = blocks;
  if (toolCalls.length > 0) reply.tool_calls = toolCalls;
  if (parts.usage !== undefined) reply.usage = parts.usage;
  if (parts.model !== undefined) reply.model = parts.model;
  return reply;
}

/** The first choice (index 0, or the first listed when none says its index). */
export function firstChoice(choices: unknown[]): JsonObject | undefined {
  for (const c of choices) {
    const choice = asObject(c);
    if (choice === undefined) continue;
    const index = asNumber(choice.index);
    if (index === undefined || index === 0) return choice;
  }
  return undefined;
}

export function decodeReply(status: number, body: unknown, route: DialectRoute): NeutralReply {
  const top = asObject(body);
  if (top === undefined) {
    throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the body is not a JSON object' });
  }
  const choices = asArray(top.choices);
  if (choices === undefined) {
    // Some servers answer an error with status 200.
    if (top.error !== undefined && top.error !== null) {
      throw toProxyError(status, upstreamErrorFromJson(top, `HTTP ${status}`));
    }
    throw new ProxyError('upstream_bad_reply', { provider: route.provider, detail: 'the reply has no choices' });
  }
  const choice = firstChoice(choices);
  return replyFromMessage(
    {
      message: asObject(choice?.message),
      finishReason: finishReasonFrom(choice?.finish_reason),
      usage: usageFromWire(top.usage),
      model: asNonEmptyString(top.model),
    },
    route,
  );
}
