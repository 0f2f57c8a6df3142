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

export interface Conversation {
  system: WireTextBlock[];
  messages: WireMessageParam[];
  /**
   * The last block of `messages` each neutral message produced (by message index), where a cache
   * breakpoint at that message's end goes; undefined for a message that produced none and for the
   * leading system messages (their end is `system`'s last block).
   */
  lastBlock: (WireContentBlock | undefined)[];
}

/** The opaque blocks this wire reads; the others are another wire's. */
export const ANTHROPIC_KINDS = new Set<OpaqueBlock['kind']>(['anthropic.thinking', 'anthropic.redacted_thinking']);

export function encodeConversation(messages: readonly NeutralMessage[], opts: EncodeOptions): Conversation {
  const conv: Conversation = { system: [], messages: [], lastBlock: [] };
  let leading = true;
  messages.forEach((m, i) => {
    if (m.role !== 'system') leading = false;
    let blocks: WireContentBlock[];
    if (m.role === 'system' && leading) {
      if (m.content.length > 0) conv.system.push({ type: 'text', text: m.content });
      return;
    }
    switch (m.role) {
      case 'system':
        blocks = m.content.length > 0 ? [{ type: 'text', text: `<system-reminder>\n${m.content}\n</system-reminder>` }] : [];
        break;
      case 'user':
        blocks = userBlocks(m.content, opts);
        break;
      case 'tool':
        blocks = [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content }];
        break;
      case 'assistant':
        blocks = assistantBlocks(m);
        break;
    }
    if (blocks.length === 0) return;
    push(conv.messages, m.role === 'assistant' ? 'assistant' : 'user', blocks);
    conv.lastBlock[i] = blocks[blocks.length - 1];
  });
  return conv;
}

function push(turns: WireMessageParam[], role: WireMessageParam['role'], blocks: WireContentBlock[]): void {
  const last = turns[turns.length - 1];
  if (last !== undefined && last.role === role) last.content.push(...blocks);
  else turns.push({ role, content: blocks });
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
