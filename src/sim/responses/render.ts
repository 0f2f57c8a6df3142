/**
 * Renders a Responses request as the simulated model reads it: tools, the instructions, then each
 * input item from its own fields only (so a request whose items extend another's renders to text
 * that extends the other's: the prefix the replica caches read).
 *
 * Reasoning items render as the reasoning they carry, decrypted, under `reasoning.context`:
 * "all_turns" renders every one; "current_turn" (the default of models before gpt-5.6) only those
 * after the last user message, so a new turn's first request differs from the last request of the
 * turn before at its first reasoning item (docs/decisions.md, Responses keep_reasoning).
 */
import { canonicalJson, sha256Hex, utf8Length } from '../hash.js';
import { openReasoning } from './encrypted.js';
import type { Boundary } from '../prompt-breakpoints.js';
import { isObject } from '../request.js';
import { itemText, type InputItem, type ResponsesRequest } from './request.js';

const END = '<|end|>\n';

export function renderResponsesPrompt(req: ResponsesRequest): string {
  return preamble(req) + shownItems(req).map(renderItem).join('');
}

function preamble(req: ResponsesRequest): string {
  let out = '';
  for (const tool of req.tools) out += `<|tool|>${canonicalJson(tool)}${END}`;
  if (req.instructions !== null) out += `<|start|>system\n${req.instructions}${END}`;
  return out;
}

function shownItems(req: ResponsesRequest): InputItem[] {
  const lastUser = req.input.findLastIndex((item) => item.type === 'message' && item.role === 'user');
  const allTurns = req.reasoning?.context === 'all_turns';
  return req.input.filter((item, i) => item.type !== 'reasoning' || allTurns || i > lastUser);
}

/**
 * Where GPT-5.6 breakpoints can stand in the rendered prompt (prompt-breakpoints.ts): the end of
 * each part that carries `prompt_cache_breakpoint`, and the end of each user message and tool output.
 */
export function responsesBoundaries(req: ResponsesRequest): Boundary[] {
  const out: Boundary[] = [];
  let at = utf8Length(preamble(req));
  for (const item of shownItems(req)) {
    const content = item.type === 'function_call_output' ? item.output : item.type === 'message' ? item.content : undefined;
    const start = at + utf8Length(itemHead(item));
    const parts = Array.isArray(content) ? (content as unknown[]) : [];
    parts.forEach((part, j) => {
      if (isObject(part) && part.prompt_cache_breakpoint !== undefined) {
        out.push({ bytes: start + utf8Length(itemText(parts.slice(0, j + 1), imageMarker)), marked: true, input: false });
      }
    });
    if (item.type === 'function_call_output' || (item.type === 'message' && item.role === 'user')) {
      out.push({ bytes: start + utf8Length(itemText(content, imageMarker)), marked: false, input: true });
    }
    at += utf8Length(renderItem(item));
  }
  return out;
}

/** What a message or tool output renders before its text. */
function itemHead(item: InputItem): string {
  return item.type === 'function_call_output' ? `<|start|>tool id=${String(item.call_id)}\n` : `<|start|>${String(item.role)}\n`;
}

function renderItem(item: InputItem): string {
  switch (item.type) {
    case 'message':
      return `${itemHead(item)}${itemText(item.content, imageMarker)}${END}`;
    case 'function_call':
      return `<|start|>assistant\n<call id=${String(item.call_id)} name=${String(item.name)}>${String(item.arguments)}</call>${END}`;
    case 'function_call_output':
      return `${itemHead(item)}${itemText(item.output, imageMarker)}${END}`;
    case 'reasoning':
      return `<|start|>assistant\n<think>${reasoningText(item)}</think>${END}`;
    default:
      return '';
  }
}

/** What a reasoning item holds: its encrypted reasoning (checked by the handler), else its summary. */
function reasoningText(item: InputItem): string {
  const sealed = typeof item.encrypted_content === 'string' ? openReasoning(item.encrypted_content) : null;
  if (sealed !== null) return sealed.text;
  return (item.summary as unknown[]).map((part) => itemText([part])).join('\n');
}

function imageMarker(url: string): string {
  return `<image ${sha256Hex(url).slice(0, 16)}>`;
}
