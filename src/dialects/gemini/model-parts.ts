/**
 * An assistant message (or a reply) as a `model` content's parts, the one place both directions
 * build them: the thought summary (where the client asked for thoughts, or a signature was on it),
 * the text, then one `functionCall` per call, each signature on the part that carried it.
 */
import type { OpaqueBlock, ToolCall } from '../../core/types.js';
import { placeSignatures } from './signatures.js';
import type { WirePart } from './wire-types.js';

export interface ModelTurn {
  content: string | null;
  thinking?: string | undefined;
  blocks?: readonly OpaqueBlock[] | undefined;
  tool_calls?: readonly ToolCall[] | undefined;
}

/** Arguments as the object `functionCall.args` is; text that is not a JSON object goes under `arguments`. */
export function argsOf(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON: kept as the model wrote it.
  }
  return { arguments: text };
}

export function modelParts(turn: ModelTurn, opts: { thoughts: boolean }): WirePart[] {
  const signed = placeSignatures(turn.blocks);
  const parts: WirePart[] = [];
  const thinking = turn.thinking ?? '';
  if (signed.thought !== undefined || (opts.thoughts && thinking !== '')) {
    parts.push(signed.thought === undefined ? { text: thinking, thought: true } : { text: thinking, thought: true, thoughtSignature: signed.thought });
  }
  const text = turn.content ?? '';
  if (text !== '' || signed.text !== undefined) parts.push(signed.text === undefined ? { text } : { text, thoughtSignature: signed.text });
  (turn.tool_calls ?? []).forEach((call, i) => {
    const part: WirePart = { functionCall: { id: call.id, name: call.name, args: argsOf(call.arguments) } };
    const signature = signed.calls.get(i);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}
