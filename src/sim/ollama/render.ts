/**
 * Renders an Ollama chat request as the simulated model's template would: tools, then each message
 * from its own fields only, so a request whose messages extend another's renders to text that
 * extends the other's (the prefix the KV slot reuses). Like Ollama's templates, call arguments
 * render with sorted keys (Go marshals a map sorted) and call ids are not rendered at all.
 */
import { canonicalJson, sha256Hex } from '../hash.js';
import type { OllamaWireMessage } from './request.js';

export function renderOllamaPrompt(tools: readonly unknown[], messages: readonly OllamaWireMessage[]): string {
  let out = '';
  for (const tool of tools) out += `<|tool|>${canonicalJson(tool)}<|end|>\n`;
  for (const msg of messages) out += renderMessage(msg);
  return out;
}

function renderMessage(msg: OllamaWireMessage): string {
  let out = `<|start|>${msg.role}`;
  if (msg.toolName !== null) out += ` name=${msg.toolName}`;
  out += '\n';
  if (msg.thinking !== null && msg.thinking !== '') out += `<think>${msg.thinking}</think>\n`;
  out += msg.content;
  // An image costs a few tokens, named by its bytes' hash.
  for (const image of msg.images) out += `<image ${sha256Hex(image).slice(0, 16)}>`;
  for (const call of msg.toolCalls) out += `\n<call name=${call.name}>${canonicalJson(call.arguments)}</call>`;
  return out + '<|end|>\n';
}

/**
 * What Ollama does with a prompt over num_ctx when `truncate` is not false: the oldest messages
 * go, system messages and the last message stay, until it fits (`server/prompt.go`). Returns the
 * messages kept, or null when even the smallest prompt does not fit.
 */
export function truncateToFit(
  tools: readonly unknown[],
  messages: readonly OllamaWireMessage[],
  fits: (prompt: string) => boolean,
): OllamaWireMessage[] | null {
  const kept = [...messages];
  for (;;) {
    if (fits(renderOllamaPrompt(tools, kept))) return kept;
    const oldest = kept.findIndex((m, i) => m.role !== 'system' && i < kept.length - 1);
    if (oldest < 0) return null;
    kept.splice(oldest, 1);
  }
}
