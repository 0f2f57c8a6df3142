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
import { canonicalJson, sha256Hex } from '../../core/canonical.js';
import { openReasoning } from './encrypted.js';
import { itemText, type InputItem, type ResponsesRequest } from './request.js';

const END = '<|end|>\n';

export function renderResponsesPrompt(req: ResponsesRequest): string {
  let out = '';
  for (const tool of req.tools) out += `<|tool|>${canonicalJson(tool)}${END}`;
  if (req.instructions !== null) out += `<|start|>system\n${req.instructions}${END}`;
  const lastUser = req.input.findLastIndex((item) => item.type === 'message' && item.role === 'user');
  const allTurns = req.reasoning?.context === 'all_turns';
  req.input.forEach((item, i) => {
    if (item.type !== 'reasoning' || allTurns || i > lastUser) out += renderItem(item);
  });
  return out;
}

function renderItem(item: InputItem): string {
  switch (item.type) {
    case 'message':
      return `<|start|>${String(item.role)}\n${itemText(item.content, imageMarker)}${END}`;
    case 'function_call':
      return `<|start|>assistant\n<call id=${String(item.call_id)} name=${String(item.name)}>${String(item.arguments)}</call>${END}`;
    case 'function_call_output':
      return `<|start|>tool id=${String(item.call_id)}\n${itemText(item.output)}${END}`;
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
