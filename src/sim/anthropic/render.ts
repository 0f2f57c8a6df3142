/**
 * Renders a Messages request as the simulated model reads it: tools, then `system`, then the turns,
 * one segment per block. Cache breakpoints, cache lookups and thinking signatures all work on these
 * segments, so they share one rule: what comes before a block is the text of the segments before it.
 *
 * Prefix-stable by construction: a block renders from its own fields only, and the markers between
 * blocks and turns are written at the start of the next segment, so a block's segment and
 * everything before it do not depend on what follows. `cache_control` is never rendered (markers
 * move from request to request). Tools render as canonical JSON, as on the chat wire; a tool call's
 * `input` renders as sent.
 */
import { canonicalJson, sha256Hex } from '../hash.js';
import { isObject } from '../request.js';
import type { Block, MessagesRequest, Turn } from './request.js';

export interface Segment {
  text: string;
  /** Where the block came from, as the API names it in errors: `tools.0`, `system.1`, `messages.2.content.0`. */
  where: string;
  /** A tool or content block (a cache boundary); false for the closing trailer. */
  boundary: boolean;
  /** The block's own `cache_control`, if any. */
  cacheControl: Record<string, unknown> | null;
  /** thinking / redacted_thinking blocks: never a cache breakpoint. */
  opaque: boolean;
  /** Message and block index, for blocks of `messages`. */
  message?: number;
  block?: number;
}

export const END = '<|end|>\n';

/**
 * `leftOut`: blocks of `messages` the model does not read (`"m.j"`, thinking dropped by its prefix
 * check): rendered as if the request never held them; the others keep their indexes.
 */
export function renderRequest(req: MessagesRequest, leftOut: ReadonlySet<string> = new Set()): Segment[] {
  const out: Segment[] = [];
  req.tools.forEach((tool, i) => {
    const { cache_control: cache, ...rest } = tool;
    out.push({ text: `<|tool|>${canonicalJson(rest)}${END}`, where: `tools.${i}`, boundary: true, cacheControl: isObject(cache) ? cache : null, opaque: false });
  });
  let pending = '';
  if (req.system.length > 0) {
    pending = pushTurn(out, 'system', req.system, 'system', pending);
  }
  req.messages.forEach((turn, m) => {
    pending = pushTurn(out, turn.role, turn.content, `messages.${m}.content`, pending, m, (j) => leftOut.has(`${m}.${j}`));
  });
  if (pending !== '') out.push({ text: pending, where: 'end', boundary: false, cacheControl: null, opaque: false });
  return out;
}

function pushTurn(out: Segment[], role: string, blocks: readonly Block[], where: string, pending: string, message?: number, skip?: (j: number) => boolean): string {
  let rendered = 0;
  blocks.forEach((block, j) => {
    if (skip?.(j) === true) return;
    const lead = rendered++ === 0 ? `${pending}<|start|>${role}\n` : '\n';
    const cache = block.cache_control;
    const segment: Segment = {
      text: lead + renderBlock(block),
      where: `${where}.${j}`,
      boundary: true,
      cacheControl: isObject(cache) ? cache : null,
      opaque: block.type === 'thinking' || block.type === 'redacted_thinking',
    };
    if (message !== undefined) {
      segment.message = message;
      segment.block = j;
    }
    out.push(segment);
  });
  return rendered > 0 ? END : pending;
}

/**
 * The segments of a reply's assistant turn, as they will render when the reply is sent back
 * (the request's closing trailer leads the first one).
 */
export function renderReplyTurn(request: readonly Segment[], content: readonly Block[]): Segment[] {
  const last = request[request.length - 1];
  const pending = last !== undefined && !last.boundary ? last.text : '';
  const out: Segment[] = [];
  pushTurn(out, 'assistant', content, 'content', pending);
  return out;
}

export function renderBlock(block: Block): string {
  switch (block.type) {
    case 'text':
      return String(block.text);
    case 'image':
      return `<image ${sha256Hex(canonicalJson(block.source)).slice(0, 16)}>`;
    case 'tool_use':
      return `<call id=${String(block.id)} name=${String(block.name)}>${JSON.stringify(block.input)}</call>`;
    case 'tool_result':
      return `<result id=${String(block.tool_use_id)}${block.is_error === true ? ' error' : ''}>${resultText(block.content)}</result>`;
    case 'thinking':
      return `<think>${String(block.thinking)}</think>`;
    case 'redacted_thinking':
      return `<redacted>${String(block.data)}</redacted>`;
    default:
      return `<${block.type}>`;
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isObject(part) && typeof part.type === 'string' ? renderBlock(part as Block) : '')).join('');
}

/** The text of the last turn: where the directives are read (text blocks and tool results alike). */
export function lastTurnText(messages: readonly Turn[]): string {
  const last = messages[messages.length - 1];
  if (last === undefined) return '';
  let out = '';
  for (const block of last.content) {
    if (block.type === 'text') out += `${String(block.text)}\n`;
    else if (block.type === 'tool_result') out += `${resultText(block.content)}\n`;
  }
  return out;
}
