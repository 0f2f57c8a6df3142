/**
 * A reply plan as OpenAI Chat Completions JSON: the non-stream `chat.completion` object, and the
 * stream's `data:` payloads in OpenAI's order (role chunk, reasoning and content deltas, tool
 * call deltas by index with id and name first then the arguments in pieces, the finish chunk,
 * the usage chunk with `choices: []` when asked, `[DONE]`).
 */
import type { SimError } from './errors.js';
import type { ReasoningField } from './modes.js';
import type { ReplyPlan, ToolCallOut } from './replies.js';

export interface ReplyMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
  replyField: ReasoningField;
}

const TEXT_PIECE = 16;
const ARGS_PIECE = 12;
/** What `[[oversized]]` adds (directives.ts): more than a proxy should read of one reply. */
export const OVERSIZED_BYTES = 4 * 1024 * 1024;
/** Oversized content goes in pieces this big, so that the stream is mostly content, not envelope. */
const OVERSIZED_PIECE = 65_536;

export function completionObject(meta: ReplyMeta, plan: ReplyPlan, usage: Record<string, unknown>): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: plan.content };
  if (plan.thinking !== null) message[meta.replyField] = plan.thinking;
  if (plan.details !== null) message.reasoning_details = plan.details.items;
  if (plan.toolCalls.length > 0) {
    message.tool_calls = plan.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
      ...signatureOf(call),
    }));
  }
  message.refusal = null;
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: plan.finishReason }],
    usage,
  };
}

/**
 * The `data:` payloads of a streamed reply. With `failure`, the stream stops after the role
 * chunk, the reasoning and the first half of the content, with an error event and no `[DONE]`.
 * The plan's transport faults: `resetMid` stops after that half too (the server then drops the
 * connection), `malformedSse` sends a payload that is not JSON after the role chunk and stops,
 * `noFinish` stops after the content, `oversized` sends OVERSIZED_BYTES more content first.
 */
export function streamPayloads(
  meta: ReplyMeta,
  plan: ReplyPlan,
  usage: Record<string, unknown> | null,
  failure: SimError | null,
): string[] {
  const out: string[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => {
    const body: Record<string, unknown> = {
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    // With include_usage every chunk but the last carries `usage: null`.
    if (usage !== null) body.usage = null;
    out.push(JSON.stringify(body));
  };

  chunk({ role: 'assistant', content: '' });
  if (plan.faults.malformedSse) {
    out.push('{"id": "broken", "choices": [ this is not JSON');
    return out;
  }
  if (plan.faults.oversized) {
    for (let sent = 0; sent < OVERSIZED_BYTES; sent += OVERSIZED_PIECE) chunk({ content: 'x'.repeat(OVERSIZED_PIECE) });
  }
  // OpenRouter sends each piece of reasoning text with the details fragment that carries it.
  const thinking = pieces(plan.thinking ?? '', TEXT_PIECE);
  const details = plan.details?.deltas ?? [];
  for (let i = 0; i < Math.max(thinking.length, details.length); i++) {
    const delta: Record<string, unknown> = {};
    if (i < thinking.length) delta[meta.replyField] = thinking[i];
    if (i < details.length) delta.reasoning_details = details[i];
    chunk(delta);
  }
  const content = pieces(plan.content ?? '', TEXT_PIECE);
  if (failure !== null || plan.faults.resetMid) {
    // Some content always goes out before the error, so the client sees a stream that broke.
    const sent = content.length > 0 ? content.slice(0, Math.ceil(content.length / 2)) : ['Partial '];
    for (const piece of sent) chunk({ content: piece });
    if (failure !== null) out.push(JSON.stringify(failure.body()));
    return out;
  }
  for (const piece of content) chunk({ content: piece });
  if (plan.faults.noFinish) return out;
  plan.toolCalls.forEach((call, index) => {
    // Gemini's signature rides on the call's first fragment.
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' }, ...signatureOf(call) }] });
    for (const piece of pieces(call.arguments, ARGS_PIECE)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  chunk({}, plan.finishReason);
  if (usage !== null) {
    out.push(JSON.stringify({ id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage }));
  }
  out.push('[DONE]');
  return out;
}

function signatureOf(call: ToolCallOut): { extra_content?: { google: { thought_signature: string } } } {
  return call.thoughtSignature === undefined ? {} : { extra_content: { google: { thought_signature: call.thoughtSignature } } };
}

/** Splits by code points, so no piece ends inside a surrogate pair. */
export function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}
