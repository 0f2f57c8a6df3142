/**
 * Reads a Responses request body on its own terms (not through src/dialects, so a proxy bug is not
 * cancelled by shared code), with the checks the API makes on a stateless request: item shapes,
 * and no item id under `store: false` (nothing was persisted, so the API answers "Item with id
 * ... not found"). Throws SimError in OpenAI's envelope, `param` naming the item.
 */
import { invalidRequest, parseJsonObject, SimError } from '../errors.js';
import { isObject } from '../request.js';

export type InputItem = Record<string, unknown> & { type: string };

export interface ReasoningAsk {
  effort: string | null;
  summary: string | null;
  /** The API's default for models before gpt-5.6 is current_turn; the simulator plays those. */
  context: 'current_turn' | 'all_turns';
}

export interface ResponsesRequest {
  model: string;
  instructions: string | null;
  input: InputItem[];
  tools: unknown[];
  stream: boolean;
  /** The API's default is true. */
  store: boolean;
  include: string[];
  reasoning: ReasoningAsk | null;
  promptCacheKey: string | null;
  maxOutputTokens: number | null;
  /** The whole body, for the fields only one mode reads (GPT-5.6's cache fields). */
  body: Record<string, unknown>;
}

const ITEM_TYPES = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);
const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

export function parseResponsesRequest(text: string): ResponsesRequest {
  const body = parseJsonObject(text);
  if (typeof body.model !== 'string' || body.model === '') throw invalidRequest("Missing required parameter: 'model'.", 'model');
  const store = body.store !== false;
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  if (!Array.isArray(input)) throw invalidRequest("Invalid type for 'input': expected a string or an array of items.", 'input');
  const reasoning = isObject(body.reasoning) ? body.reasoning : null;
  const max = body.max_output_tokens;
  return {
    model: body.model,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    input: input.map((item: unknown, i) => readItem(item, i, store)),
    tools: Array.isArray(body.tools) ? body.tools : [],
    stream: body.stream === true,
    store,
    include: Array.isArray(body.include) ? body.include.filter((x): x is string => typeof x === 'string') : [],
    reasoning: reasoning === null ? null : {
      effort: typeof reasoning.effort === 'string' ? reasoning.effort : null,
      summary: typeof reasoning.summary === 'string' ? reasoning.summary : null,
      context: reasoning.context === 'all_turns' ? 'all_turns' : 'current_turn',
    },
    promptCacheKey: typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '' ? body.prompt_cache_key : null,
    maxOutputTokens: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null,
    body,
  };
}

function readItem(raw: unknown, i: number, store: boolean): InputItem {
  const param = `input[${i}]`;
  if (!isObject(raw)) throw invalidRequest(`Invalid type for '${param}': expected an object.`, param);
  // An easy input message ({role, content}) has no type.
  const type = typeof raw.type === 'string' ? raw.type : 'role' in raw ? 'message' : '';
  if (type === 'item_reference' || (!store && typeof raw.id === 'string')) {
    const message = `Item with id '${String(raw.id)}' not found. Items are not persisted when \`store\` is set to false. `
      + 'Try again with `store` set to true, or remove this item from your input.';
    throw new SimError(404, null, message, 'input');
  }
  if (!ITEM_TYPES.has(type)) {
    const known = "'message', 'function_call', 'function_call_output' and 'reasoning'";
    throw invalidRequest(`Invalid value: '${type}'. Supported values are: ${known}.`, `${param}.type`, 'invalid_value');
  }
  const item = { ...raw, type };
  const needs = (field: string, ok: boolean): void => {
    if (!ok) throw invalidRequest(`Missing or invalid parameter: '${param}.${field}'.`, `${param}.${field}`);
  };
  if (type === 'message') {
    needs('role', typeof raw.role === 'string' && ROLES.has(raw.role));
    needs('content', typeof raw.content === 'string' || Array.isArray(raw.content));
  } else if (type === 'function_call') {
    needs('call_id', typeof raw.call_id === 'string');
    needs('name', typeof raw.name === 'string');
    needs('arguments', typeof raw.arguments === 'string');
  } else if (type === 'function_call_output') {
    needs('call_id', typeof raw.call_id === 'string');
    needs('output', typeof raw.output === 'string' || Array.isArray(raw.output));
  } else {
    needs('summary', Array.isArray(raw.summary));
    needs('encrypted_content', raw.encrypted_content === undefined || raw.encrypted_content === null || typeof raw.encrypted_content === 'string');
  }
  return item;
}

/** The text of a message's content, or of a function output: a string, or its parts' text. */
export function itemText(content: unknown, imageMarker: (url: string) => string = () => ''): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content as unknown[]) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string') out += part.text;
    else if (typeof part.refusal === 'string') out += part.refusal;
    else if (typeof part.image_url === 'string') out += imageMarker(part.image_url);
  }
  return out;
}

/**
 * Every function_call answered by a function_call_output with its call_id, and every output
 * answering a call made before it: the API's 400s, worded as it words them.
 */
export function checkCallPairs(input: readonly InputItem[]): void {
  const pending = new Map<string, number>();
  input.forEach((item, i) => {
    if (item.type === 'function_call') pending.set(item.call_id as string, i);
    if (item.type !== 'function_call_output') return;
    const id = item.call_id as string;
    if (!pending.delete(id)) throw invalidRequest(`No tool call found for function call output with call_id ${id}.`, `input[${i}]`, 'orphan_tool_result');
  });
  for (const [id, i] of pending) throw invalidRequest(`No tool output found for function call ${id}.`, `input[${i}]`, 'unanswered_tool_calls');
}
