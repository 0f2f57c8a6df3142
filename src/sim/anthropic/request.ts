/**
 * Reads a Messages request body on its own terms (not through src/dialects, so a proxy bug is not
 * cancelled by shared code): the fields the simulator uses and the shape checks the API makes.
 * Throws SimError (400) with the API's field path (`messages.1.content.0.type`) in the message.
 */
import { canonicalJson } from '../hash.js';
import { isObject } from '../request.js';
import { parseBlockBinding, type PrefixMismatch } from './block-binding.js';
import { invalid } from './errors.js';

export type Block = Record<string, unknown> & { type: string };

export interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

export interface ThinkingAsk {
  type: 'enabled' | 'adaptive' | 'disabled';
  budget: number | null;
  /** `block_binding.prefix_mismatch_behavior`; "error" when not set (block-binding.ts). */
  prefixMismatch: PrefixMismatch;
}

export interface MessagesRequest {
  model: string;
  maxTokens: number;
  /** `system` as blocks (a string is one text block). */
  system: Block[];
  tools: Record<string, unknown>[];
  messages: Turn[];
  thinking: ThinkingAsk | null;
  temperature: number | null;
  topK: number | null;
  /** `tool_choice.type`, when the request sets one. */
  toolChoice: string | null;
  stream: boolean;
  /** The request's own `cache_control` (a breakpoint on the last cacheable block). */
  topLevelCache: Record<string, unknown> | null;
  /**
   * What the cache of message blocks is keyed on besides their text: `tool_choice`, the thinking
   * settings and `output_config.effort`, defaults filled in ("Changes to `tool_choice` parameter
   * only affect message blocks"; thinking and effort changes likewise; an effort set to the
   * model's default is the same as none: https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
   */
  messageCacheKey: string;
}

/** Block types a request may hold; anything else is refused, as the API does. */
const BLOCK_TYPES = new Set(['text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

/** `count`: a `count_tokens` body, which has no `max_tokens`; `betas`: the `anthropic-beta` values sent. */
export function parseMessagesRequest(text: string, opts: { count?: boolean; betas?: readonly string[] } = {}): MessagesRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw invalid(`The request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(body)) throw invalid('The request body must be a JSON object.');
  const { model, max_tokens: maxTokens, system, tools, messages, thinking, temperature, stream, cache_control: cache, tool_choice: toolChoice, output_config: output } = body;
  if (typeof model !== 'string' || model === '') throw invalid('model: Field required');
  if (opts.count !== true && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)) throw invalid('max_tokens: Field required (a positive integer)');
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages: at least one message is required');
  if (tools !== undefined && !Array.isArray(tools)) throw invalid('tools: Input should be a valid list');
  (tools ?? []).forEach((tool: unknown, i: number) => {
    if (!isObject(tool) || typeof tool.name !== 'string' || !isObject(tool.input_schema)) {
      throw invalid(`tools.${i}: a custom tool needs a string name and an object input_schema`);
    }
  });
  if (stream !== undefined && typeof stream !== 'boolean') throw invalid('stream: Input should be a valid boolean');
  if (temperature !== undefined && typeof temperature !== 'number') throw invalid('temperature: Input should be a valid number');
  if (cache !== undefined && !isObject(cache)) throw invalid('cache_control: Input should be an object');

  return {
    model,
    maxTokens: typeof maxTokens === 'number' ? maxTokens : 0,
    system: systemBlocks(system),
    tools: (tools ?? []) as Record<string, unknown>[],
    messages: messages.map((msg: unknown, i) => turn(msg, i)),
    thinking: thinkingAsk(thinking, opts.betas ?? []),
    temperature: typeof temperature === 'number' ? temperature : null,
    topK: typeof body.top_k === 'number' ? body.top_k : null,
    toolChoice: isObject(toolChoice) && typeof toolChoice.type === 'string' ? toolChoice.type : null,
    stream: stream === true,
    topLevelCache: isObject(cache) ? cache : null,
    messageCacheKey: canonicalJson({
      tool_choice: isObject(toolChoice) ? toolChoice : { type: 'auto' },
      thinking: isObject(thinking) ? thinkingSetting(thinking) : { type: 'disabled' },
      effort: isObject(output) && typeof output.effort === 'string' ? output.effort : 'high',
    }),
  };
}

function systemBlocks(system: unknown): Block[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  if (!Array.isArray(system)) throw invalid('system: Input should be a valid string or list of text blocks');
  return system.map((block: unknown, j) => {
    if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') throw invalid(`system.${j}: Input should be a text block`);
    if (block.text === '') throw invalid(`system.${j}: text content blocks must be non-empty`);
    return block as Block;
  });
}

function turn(msg: unknown, i: number): Turn {
  if (!isObject(msg)) throw invalid(`messages.${i}: Input should be an object`);
  if (msg.role !== 'user' && msg.role !== 'assistant') {
    throw invalid(`messages.${i}.role: Input should be 'user' or 'assistant' (got ${JSON.stringify(msg.role)})`);
  }
  const { content } = msg;
  if (typeof content === 'string') return { role: msg.role, content: [{ type: 'text', text: content }] };
  if (!Array.isArray(content)) throw invalid(`messages.${i}.content: Input should be a valid string or list`);
  return { role: msg.role, content: content.map((block: unknown, j) => checkBlock(block, `messages.${i}.content.${j}`)) };
}

function checkBlock(block: unknown, where: string): Block {
  if (!isObject(block) || typeof block.type !== 'string') throw invalid(`${where}: Input should be a content block object with a type`);
  if (!BLOCK_TYPES.has(block.type)) throw invalid(`${where}: Input tag '${block.type}' found using 'type' does not match any of the expected tags`);
  const need = (field: string, kind: 'string' | 'object'): void => {
    const ok = kind === 'string' ? typeof block[field] === 'string' : isObject(block[field]);
    if (!ok) throw invalid(`${where}.${field}: Field required (${kind})`);
  };
  switch (block.type) {
    case 'text':
      need('text', 'string');
      if (block.text === '') throw invalid(`${where}: text content blocks must be non-empty`);
      break;
    case 'image':
      need('source', 'object');
      break;
    case 'tool_use':
      need('id', 'string');
      need('name', 'string');
      need('input', 'object');
      break;
    case 'tool_result':
      need('tool_use_id', 'string');
      break;
    case 'thinking':
      need('thinking', 'string');
      need('signature', 'string');
      break;
    case 'redacted_thinking':
      need('data', 'string');
      break;
  }
  return block as Block;
}

/**
 * The thinking settings as the message cache sees them: without `block_binding`. Anthropic's
 * prompt-caching page names enabling or disabling thinking and its budget as what invalidates cached
 * message blocks; `block_binding` only says what to do with a block that fails its prefix check, and
 * a dropped block is left out of the rendering the cache reads (signature.ts), so the prefix before
 * it reads as it did without the setting.
 */
function thinkingSetting(thinking: Record<string, unknown>): Record<string, unknown> {
  const { block_binding: _binding, ...rest } = thinking;
  return rest;
}

function thinkingAsk(thinking: unknown, betas: readonly string[]): ThinkingAsk | null {
  if (thinking === undefined || thinking === null) return null;
  if (!isObject(thinking) || (thinking.type !== 'enabled' && thinking.type !== 'adaptive' && thinking.type !== 'disabled')) {
    throw invalid("thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'");
  }
  const budget = thinking.budget_tokens;
  if (thinking.type === 'enabled' && (typeof budget !== 'number' || !Number.isInteger(budget))) throw invalid('thinking.enabled.budget_tokens: Field required');
  return { type: thinking.type, budget: typeof budget === 'number' ? budget : null, prefixMismatch: parseBlockBinding(thinking, betas) };
}

/** Thinking is produced when asked for, `enabled` or `adaptive` alike. */
export function thinks(req: MessagesRequest): boolean {
  return req.thinking !== null && req.thinking.type !== 'disabled';
}
