/**
 * Neutral messages -> Anthropic's `system` and strictly alternating `messages`.
 *
 * - The leading system messages become `system` text blocks. A later system message (the `append`
 *   system policy puts a changed prompt at the end) has no place of its own on this wire: it goes
 *   as a user text block in `<system-reminder>` tags, which keeps everything before it unchanged.
 * - Tool results become `tool_result` blocks of a user turn; consecutive results, and a user
 *   message after them, join one user turn (results first, as the API requires).
 * - Consecutive messages of one role are merged into one turn, so roles alternate strictly.
 * - An assistant turn is its Anthropic blocks, each where it stood among the calls (`before_call`),
 *   then its text, then its calls as `tool_use`. Its thinking text never goes: the API reads thinking
 *   only as the signed blocks it gave. Blocks of other kinds are another wire's and are left out.
 * - Empty text is left out (the API refuses empty text blocks); a message left with no block at all
 *   is left out too.
 */
import type { AssistantMessage, ContentPart, NeutralMessage, OpaqueBlock, ToolCall } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { asObject, parseJson } from '../wire-read.js';
import type { WireContentBlock, WireMessageParam, WireOpaqueBlock, WireTextBlock, WireToolUseBlock } from './wire-types.js';

/** The opaque blocks this wire reads; the others are another wire's. */
export const ANTHROPIC_KINDS = new Set<OpaqueBlock['kind']>(['anthropic.thinking', 'anthropic.redacted_thinking']);

/** How many system messages lead the conversation: they are `system`, not turns. */
export function leadingSystem(messages: readonly NeutralMessage[]): number {
  let n = 0;
  while (messages[n]?.role === 'system') n++;
  return n;
}

/** The leading system messages as `system`'s text blocks. */
export function systemBlocks(messages: readonly NeutralMessage[], leading: number): WireTextBlock[] {
  const out: WireTextBlock[] = [];
  for (const m of messages.slice(0, leading)) {
    if (m.role === 'system' && m.content.length > 0) out.push({ type: 'text', text: m.content });
  }
  return out;
}

/** The turn a message's blocks join. */
export function turnRole(m: NeutralMessage): WireMessageParam['role'] {
  return m.role === 'assistant' ? 'assistant' : 'user';
}

/**
 * The blocks each message after the leading system prompt puts in its turn, made at most once per
 * request and only for the messages asked about (the encoder asks for the few at the end it looks
 * at, and for those it serialises).
 */
export class MessageBlocks {
  readonly messages: readonly NeutralMessage[];
  /** Leading system messages (they have no blocks here). */
  readonly leading: number;
  readonly #opts: EncodeOptions;
  readonly #made: (WireContentBlock[] | undefined)[] = [];

  constructor(messages: readonly NeutralMessage[], opts: EncodeOptions) {
    this.messages = messages;
    this.leading = leadingSystem(messages);
    this.#opts = opts;
  }

  of(i: number): WireContentBlock[] {
    if (i < this.leading) return [];
    return (this.#made[i] ??= messageBlocks(this.messages[i]!, this.#opts));
  }
}

function messageBlocks(m: NeutralMessage, opts: EncodeOptions): WireContentBlock[] {
  switch (m.role) {
    case 'system':
      return m.content.length > 0 ? [{ type: 'text', text: `<system-reminder>\n${m.content}\n</system-reminder>` }] : [];
    case 'user':
      return userBlocks(m.content, opts);
    case 'tool':
      return [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content }];
    case 'assistant':
      return assistantBlocks(m);
  }
}

function userBlocks(content: string | ContentPart[], opts: EncodeOptions): WireContentBlock[] {
  if (typeof content === 'string') return content.length > 0 ? [{ type: 'text', text: content }] : [];
  const out: WireContentBlock[] = [];
  for (const part of content) {
    if (part.type === 'text') {
      if (part.text.length > 0) out.push({ type: 'text', text: part.text });
      continue;
    }
    const image = opts.resolveImage(part.sha256);
    out.push({ type: 'image', source: { type: 'base64', media_type: image.mime, data: image.base64 } });
  }
  return out;
}

/**
 * Blocks with `before_call` k go right before call k (0 or absent: before the text); a block
 * whose k is past the last call goes at the end.
 */
export function assistantBlocks(m: AssistantMessage): WireContentBlock[] {
  const calls = m.tool_calls ?? [];
  const n = calls.length;
  const mine = (m.blocks ?? []).filter((b) => ANTHROPIC_KINDS.has(b.kind));
  const group = (k: number): WireOpaqueBlock[] => {
    const out: WireOpaqueBlock[] = [];
    for (const b of mine) {
      const data = asObject(b.data);
      if (data !== undefined && Math.min(b.before_call ?? 0, n) === k) out.push(data as WireOpaqueBlock);
    }
    return out;
  };

  const out: WireContentBlock[] = group(0);
  if (m.content !== null && m.content.length > 0) out.push({ type: 'text', text: m.content });
  calls.forEach((call, k) => {
    if (k > 0) out.push(...group(k));
    out.push(toolUse(call));
  });
  if (n > 0) out.push(...group(n));
  return out;
}

/** The arguments text parsed to the object `input` must be; anything else (never seen from Claude) as `{}`. */
function toolUse(call: ToolCall): WireToolUseBlock {
  const parsed = call.arguments.trim().length > 0 ? parseJson(call.arguments) : undefined;
  const input = asObject(parsed?.value) ?? {};
  return { type: 'tool_use', id: call.id, name: call.name, input };
}
