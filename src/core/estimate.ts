/**
 * Token estimates. The window needs a deterministic, provider-independent size: bytes / 3
 * (UTF-8), rounded up. Images count as the chat-completions image tiler would bill them.
 */
import type { ContentPart, NeutralMessage } from './types.js';

const encoder = new TextEncoder();

export function estimateTextTokens(text: string): number {
  return Math.ceil(utf8Length(text) / 3);
}

/** UTF-8 byte length without allocating. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * 85 tokens, plus 170 per 512-pixel tile for high detail, after scaling the image to fit
 * 2048x2048 and then its shorter side to 768.
 */
export function estimateImageTokens(width: number, height: number, detail: 'auto' | 'low' | 'high' = 'auto'): number {
  if (detail === 'low' || width <= 0 || height <= 0) return 85;
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shorter = Math.min(w, h);
  if (shorter > 768) {
    const scale = 768 / shorter;
    w *= scale;
    h *= scale;
  }
  const tiles = Math.ceil(w / 512) * Math.ceil(h / 512);
  return 85 + 170 * tiles;
}

export function estimatePartsTokens(parts: string | ContentPart[]): number {
  if (typeof parts === 'string') return estimateTextTokens(parts);
  let total = 0;
  for (const part of parts) total += part.type === 'text' ? estimateTextTokens(part.text) : part.tokens;
  return total;
}

/** The estimate of one message as the window sends it (content, thinking, calls, blocks). */
export function estimateMessageTokens(msg: NeutralMessage): number {
  switch (msg.role) {
    case 'system':
    case 'tool':
      return estimateTextTokens(msg.content);
    case 'user':
      return estimatePartsTokens(msg.content);
    case 'assistant': {
      let total = msg.content === null ? 0 : estimateTextTokens(msg.content);
      if (msg.thinking !== undefined) total += estimateTextTokens(msg.thinking);
      for (const call of msg.tool_calls ?? []) total += estimateTextTokens(call.name) + estimateTextTokens(call.arguments);
      for (const block of msg.blocks ?? []) total += estimateTextTokens(JSON.stringify(block.data));
      return total;
    }
  }
}
