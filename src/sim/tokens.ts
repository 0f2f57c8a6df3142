/**
 * The simulator's tokeniser. A request is rendered like a chat template (tools, then messages,
 * each one rendered from its own fields only) and its UTF-8 bytes are cut in 4-byte tokens
 * (the last partial chunk is a token too). Because each item renders on its own, a request
 * whose messages extend another's renders to a string that extends the other's: the prefix
 * property the cache needs. Cache blocks are 128 tokens (512 bytes), chained by hash.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, sha256Hex, utf8Length } from './hash.js';
import { contentText, isObject, type WireMessage } from './request.js';
import { REASONING_FIELDS } from './modes.js';
import type { Boundary } from './prompt-breakpoints.js';

export const TOKEN_BYTES = 4;
export const BLOCK_TOKENS = 128;
const BLOCK_BYTES = TOKEN_BYTES * BLOCK_TOKENS;

export function countTokens(text: string): number {
  return Math.ceil(utf8Length(text) / TOKEN_BYTES);
}

export function renderPrompt(tools: readonly unknown[], messages: readonly WireMessage[]): string {
  let out = '';
  // Canonical JSON: a tool re-serialised with other key orders renders the same (as the brief asks).
  for (const tool of tools) out += `<|tool|>${canonicalJson(tool)}<|end|>\n`;
  for (const msg of messages) out += renderMessage(msg);
  return out;
}

function renderMessage(msg: WireMessage, withReasoning = true): string {
  let out = messageHead(msg, withReasoning);
  out += contentText(msg.content, imageMarker);
  // Shape errors are reported by strict.ts; here a malformed call renders as best it can.
  if (Array.isArray(msg.tool_calls)) {
    for (const call of msg.tool_calls as unknown[]) {
      const fn = isObject(call) && isObject(call.function) ? call.function : {};
      const id = isObject(call) ? String(call.id) : '';
      out += `\n<call id=${id} name=${String(fn.name)}>${typeof fn.arguments === 'string' ? fn.arguments : ''}</call>`;
    }
  }
  return out + '<|end|>\n';
}

/** What a message renders before its content: role, name, call id, reasoning. */
function messageHead(msg: WireMessage, withReasoning: boolean): string {
  let out = `<|start|>${msg.role}`;
  if (typeof msg.name === 'string') out += ` name=${msg.name}`;
  if (msg.role === 'tool') out += ` id=${String(msg.tool_call_id)}`;
  out += '\n';
  const thinking = withReasoning ? reasoningOf(msg) : null;
  if (thinking !== null) out += `<think>${thinking}</think>\n`;
  return out;
}

/**
 * Where GPT-5.6 breakpoints can stand in `renderPrompt(tools, messages)`: the end of each content
 * part that carries `prompt_cache_breakpoint`, and the end of each user or tool message's content.
 */
export function messageBoundaries(tools: readonly unknown[], messages: readonly WireMessage[]): Boundary[] {
  const out: Boundary[] = [];
  let at = utf8Length(renderPrompt(tools, []));
  for (const msg of messages) {
    const start = at + utf8Length(messageHead(msg, true));
    const parts = Array.isArray(msg.content) ? (msg.content as unknown[]) : [];
    parts.forEach((part, j) => {
      if (isObject(part) && part.prompt_cache_breakpoint !== undefined) {
        out.push({ bytes: start + utf8Length(contentText(parts.slice(0, j + 1), imageMarker)), marked: true, input: false });
      }
    });
    if (msg.role === 'user' || msg.role === 'tool') out.push({ bytes: start + utf8Length(contentText(msg.content, imageMarker)), marked: false, input: true });
    at += utf8Length(renderMessage(msg));
  }
  return out;
}

/**
 * SHA-256 hex of the prompt before each message, rendered without reasoning: `[i]` covers the
 * tools and `messages[0..i)`, `[messages.length]` the whole prompt. What a signed reply made after
 * `messages[0..i)` is bound to when it comes back as `messages[i]`; reasoning is left out so that
 * an earlier reply's reasoning, dropped or sent beside its details, does not count as a change.
 */
export function prefixDigests(tools: readonly unknown[], messages: readonly WireMessage[]): string[] {
  const hash = createHash('sha256').update(renderPrompt(tools, []));
  const out = [hash.copy().digest('hex')];
  for (const msg of messages) out.push(hash.update(renderMessage(msg, false)).copy().digest('hex'));
  return out;
}

/**
 * The reasoning a message shows the model: the text items of its `reasoning_details` when it has
 * some (OpenRouter reads those, and a text field beside them says the same), else the first
 * reasoning field present, in REASONING_FIELDS order.
 */
export function reasoningOf(msg: WireMessage): string | null {
  const details = msg.reasoning_details;
  if (Array.isArray(details) && details.length > 0) {
    return details.map((d) => (isObject(d) && d.type === 'reasoning.text' && typeof d.text === 'string' ? d.text : '')).join('');
  }
  for (const field of REASONING_FIELDS) {
    const value = msg[field];
    if (typeof value === 'string') return value;
  }
  return null;
}

/** An image costs a few tokens, named by its URL's hash (data URLs would be huge otherwise). */
export function imageMarker(url: string): string {
  return `<image ${sha256Hex(url).slice(0, 16)}>`;
}

/** A rendered prompt as tokens: only byte offsets are kept, token identity is the chunk bytes. */
export class TokenSeq {
  readonly bytes: Buffer;
  readonly count: number;
  #digest: string | undefined;

  constructor(text: string) {
    this.bytes = Buffer.from(text, 'utf8');
    this.count = Math.ceil(this.bytes.length / TOKEN_BYTES);
  }

  /** Blocks of 128 whole tokens. */
  get fullBlocks(): number {
    return Math.floor(this.count / BLOCK_TOKENS);
  }

  /** key(i) = H(key(i-1) || bytes of block i): a block's key names its whole prefix. */
  blockKeys(): string[] {
    const keys: string[] = [];
    let prev = Buffer.alloc(0);
    for (let i = 0; i < this.fullBlocks; i++) {
      const block = this.bytes.subarray(i * BLOCK_BYTES, (i + 1) * BLOCK_BYTES);
      prev = createHash('sha256').update(prev).update(block).digest();
      keys.push(prev.toString('base64'));
    }
    return keys;
  }

  /** A 32-bit hash of the first `tokens` tokens (OpenAI routes on about the first 256). */
  prefixHash(tokens: number): number {
    return createHash('sha256').update(this.bytes.subarray(0, tokens * TOKEN_BYTES)).digest().readUInt32BE(0);
  }

  /** SHA-256 hex of the whole prompt: seeds every deterministic choice of the reply. */
  get digest(): string {
    this.#digest ??= createHash('sha256').update(this.bytes).digest('hex');
    return this.#digest;
  }
}
