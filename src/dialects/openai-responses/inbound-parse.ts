/**
 * The inbound wire: a Responses request body (`POST /v1/responses`, openai-node
 * `src/resources/responses/responses.ts` `ResponseCreateParams`), validated once, every error naming
 * the field (`input[3].call_id`). Unknown top-level fields are ignored as on the chat endpoint; an
 * input item of a type the proxy cannot carry to every upstream, or a feature that needs OpenAI's
 * own storage (`background`, `conversation`, `prompt`), is a 400 that says so.
 */
import { z } from 'zod';
import { ProxyError } from '../../core/errors.js';
import { MAX_JSON_DEPTH, textDepth } from '../../core/json-depth.js';
import { checkBodyShape, issueError, requireObject } from '../client-body.js';
import { FrozenResults, ListResults } from '../../core/list-lineage.js';

const text = z.string();
const inputText = z.object({ type: z.literal('input_text'), text }).loose();
const outputText = z.object({ type: z.literal('output_text'), text }).loose();
const refusal = z.object({ type: z.literal('refusal'), refusal: text }).loose();
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z.string().min(1).nullable().optional(),
  file_id: z.string().nullable().optional(),
  detail: z.enum(['auto', 'low', 'high']).nullable().optional(),
}).loose();
const part = z.discriminatedUnion('type', [inputText, outputText, refusal, inputImage]);
const content = z.union([text, z.array(part)]);

const messageItem = z.object({
  type: z.literal('message'),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content,
}).loose();
const functionCall = z.object({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string().min(1), arguments: text }).loose();
const functionOutput = z.object({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: content }).loose();
const reasoningItem = z.object({
  type: z.literal('reasoning'),
  summary: z.array(z.unknown()).optional(),
  encrypted_content: z.string().nullable().optional(),
}).loose();

// A client's ask for its conversation compacted, and the item that answered an earlier ask
// (compaction.ts): the proxy's own, or refused where it is read.
const compactionTrigger = z.object({ type: z.literal('compaction_trigger') }).loose();
const compaction = z.object({ type: z.literal('compaction'), encrypted_content: z.string() }).loose();

const byType = {
  message: messageItem, function_call: functionCall, function_call_output: functionOutput, reasoning: reasoningItem,
  compaction_trigger: compactionTrigger, compaction,
} as const;
export const ITEM_TYPES = Object.keys(byType);

export type ContentPart = z.infer<typeof part>;
export type InputItem =
  | z.infer<typeof messageItem>
  | z.infer<typeof functionCall>
  | z.infer<typeof functionOutput>
  | z.infer<typeof reasoningItem>
  | z.infer<typeof compactionTrigger>
  | z.infer<typeof compaction>;

const functionTool = z.object({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  parameters: z.unknown().optional(),
  strict: z.boolean().nullable().optional(),
}).loose();
export type FunctionToolParam = z.infer<typeof functionTool>;

const responsesRequest = z.object({
  model: z.string().min(1),
  input: z.union([text, z.array(z.unknown())]).optional(),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  // Checked on their own (checkTools): a client resends the same tools with every request.
  tools: z.unknown().optional(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  reasoning: z.object({ effort: z.string().nullable().optional(), summary: z.string().nullable().optional() }).loose().nullable().optional(),
  text: z.object({ format: z.object({ type: z.string() }).loose().nullable().optional() }).loose().nullable().optional(),
  store: z.boolean().nullable().optional(),
  include: z.array(z.string()).nullable().optional(),
  prompt_cache_key: z.string().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  background: z.boolean().nullable().optional(),
}).loose();

export type ResponsesBody = z.infer<typeof responsesRequest>;

/**
 * The top-level fields the proxy reads or sets itself; the rest (`metadata`, `service_tier`,
 * `safety_identifier`, `truncation`, `user`, ...) pass to an upstream of this wire. `text` and
 * `include` pass in part: what the proxy does not read of them (inbound-convert.ts).
 */
export const READ_FIELDS: ReadonlySet<string> = new Set(Object.keys(responsesRequest.shape).filter((k) => k !== 'text' && k !== 'include'));

export interface ParsedResponses {
  body: ResponsesBody;
  input: InputItem[];
  /** The function tools (other tool types are dropped: inbound-convert.ts). */
  tools: readonly FunctionToolParam[];
  /** The body's own `tools`, by which their conversion is kept (inbound.ts). */
  rawTools: unknown;
}

/** Features that live in OpenAI's own storage or scheduler: nothing the proxy could give every upstream. */
const UNSUPPORTED = ['conversation', 'prompt'] as const;

/** Validate a parsed JSON body; throws a ProxyError naming the first bad field. */
export function parseResponsesRequest(raw: unknown): ParsedResponses {
  requireObject(raw);
  checkBodyShape(raw, 'input');
  const top = responsesRequest.safeParse(raw);
  if (!top.success) throw issueError(top.error.issues[0]!);
  const body = top.data;
  if (body.background === true) throw unsupported('background', 'background responses are not supported by the proxy; send the request with stream or wait for it');
  for (const field of UNSUPPORTED) {
    if (raw[field] !== undefined && raw[field] !== null) throw unsupported(field, `'${field}' needs OpenAI's own storage, which the proxy does not have; send the input itself`);
  }
  // The client's own list: the body memo says which earlier list it repeats (src/core/list-lineage.ts).
  const list = Array.isArray(raw.input) ? raw.input as unknown[] : undefined;
  const checked = list === undefined ? [] : CHECKED.reused(list);
  const input = typeof body.input === 'string' ? [{ type: 'message' as const, role: 'user' as const, content: body.input }]
    : list === undefined ? [] : [...checked, ...list.slice(checked.length).map((item, i) => parseItem(item, checked.length + i))];
  if (input.length === 0 && (body.previous_response_id ?? null) === null) {
    throw new ProxyError('invalid_request', { detail: "Missing required parameter: 'input'." }, { param: 'input' });
  }
  // Arguments are JSON in a string: session matching and the Anthropic and Ollama encoders parse them later.
  input.forEach((item, i) => {
    if (i < checked.length || item.type !== 'function_call' || textDepth(item.arguments, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return;
    const param = `input[${i}].arguments`;
    throw new ProxyError('json_too_deep', { param, limit: MAX_JSON_DEPTH }, { param });
  });
  const trigger = input.findIndex((item) => item.type === 'compaction_trigger');
  if (trigger !== -1 && trigger !== input.length - 1) {
    const param = `input[${trigger}]`;
    throw new ProxyError('invalid_request', { detail: `'${param}' is a compaction_trigger, which must be the last input item.` }, { param });
  }
  const tools = checkTools(raw.tools);
  if (list !== undefined) CHECKED.keep(list, input);
  return { body, input, tools, rawTools: raw.tools };
}

const toolList = z.array(z.object({ type: z.string() }).loose()).nullable().optional();

/**
 * The function tools of a tools list that passed, by the body's own frozen array: the head memo
 * hands a list resent unchanged over as the same array (src/proxy/head-memo.ts), checked once.
 */
const TOOLS_CHECKED = new FrozenResults<readonly FunctionToolParam[]>();

function checkTools(raw: unknown): readonly FunctionToolParam[] {
  return TOOLS_CHECKED.of(raw, () => {
    const parsed = toolList.safeParse(raw);
    if (!parsed.success) throw issueError(parsed.error.issues[0]!, 'tools');
    const tools: FunctionToolParam[] = [];
    (parsed.data ?? []).forEach((t, i) => {
      if (t.type !== 'function') return;
      const tool = functionTool.safeParse(t);
      if (!tool.success) throw issueError(tool.error.issues[0]!, `tools[${i}]`);
      tools.push(tool.data);
    });
    return tools;
  });
}

/** What the checks made of each item of a list that passed them: a resent history is checked once. */
const CHECKED = new ListResults<InputItem>();

function parseItem(raw: unknown, index: number): InputItem {
  const param = `input[${index}]`;
  requireObject(raw, param);
  // An "easy" input message ({role, content}) has no type.
  const given = (raw as { type?: unknown }).type;
  const type = given === undefined && 'role' in raw ? 'message' : given;
  if (typeof type !== 'string' || !(type in byType)) {
    const detail = `Invalid value for '${param}.type': ${JSON.stringify(type ?? null)}; the proxy reads ${ITEM_TYPES.join(', ')} items.`;
    throw new ProxyError('invalid_request', { detail }, { param: `${param}.type` });
  }
  const parsed = byType[type as keyof typeof byType].safeParse({ ...raw, type });
  if (!parsed.success) throw issueError(parsed.error.issues[0]!, param);
  return parsed.data as InputItem;
}

function unsupported(param: string, detail: string): ProxyError {
  return new ProxyError('invalid_request', { detail: `Unsupported parameter '${param}': ${detail}.` }, { param });
}
