/**
 * The inbound wire: an OpenAI Chat Completions request body, validated once, with every error
 * naming the field (`messages[2].tool_call_id`). Unknown top-level fields are ignored, as OpenAI's
 * own compatible servers do; unknown roles and ill-typed fields are 400s.
 */
import { z } from 'zod';
import { ProxyError } from '../../core/errors.js';
import { FrozenResults, ListResults } from '../../core/list-lineage.js';
import { MAX_JSON_DEPTH, textDepth } from '../../core/json-depth.js';
import { checkBodyShape, issueError, requireObject } from '../client-body.js';
import { isWellFormedMessage } from './inbound-shape.js';

const text = z.string();
const textPart = z.object({ type: z.literal('text'), text }).loose();
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }).loose(),
}).loose();
const part = z.discriminatedUnion('type', [textPart, imagePart]);
const content = z.union([text, z.array(part)]);

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1), arguments: z.string() }).loose(),
}).loose();

const systemMessage = z.object({ role: z.enum(['system', 'developer']), content: z.union([text, z.array(textPart)]) }).loose();
const userMessage = z.object({ role: z.literal('user'), content }).loose();
const assistantMessage = z.object({
  role: z.literal('assistant'),
  content: z.union([text, z.array(textPart), z.null()]).optional(),
  tool_calls: z.array(toolCall).optional(),
}).loose();
const toolMessage = z.object({
  role: z.literal('tool'),
  tool_call_id: z.string().min(1),
  content: z.union([text, z.array(textPart)]),
}).loose();

export const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

const tool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.unknown().optional(),
    strict: z.boolean().nullable().optional(),
  }).loose(),
}).loose();

const chatRequest = z.object({
  model: z.string().min(1),
  messages: z.array(z.unknown()).min(1),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
  // Checked on their own (checkTools): a client resends the same tools with every request.
  tools: z.unknown().optional(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  response_format: z.unknown().optional(),
  reasoning_effort: z.string().nullable().optional(),
  presence_penalty: z.number().nullable().optional(),
  frequency_penalty: z.number().nullable().optional(),
  n: z.literal(1).nullable().optional(),
  session_id: z.string().nullable().optional(),
  prompt_cache_key: z.string().nullable().optional(),
}).loose();

export type ChatRequest = z.infer<typeof chatRequest>;

/** The top-level fields the proxy reads itself (the rest pass to an upstream of this wire). */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(chatRequest.shape));

/** The schema of a message by role (the shape checks in inbound-shape.ts are held to these). */
export const MESSAGE_SCHEMAS = { system: systemMessage, developer: systemMessage, user: userMessage, assistant: assistantMessage, tool: toolMessage } as const;
export type ChatMessage =
  | z.infer<typeof systemMessage>
  | z.infer<typeof userMessage>
  | z.infer<typeof assistantMessage>
  | z.infer<typeof toolMessage>;

const byRole = MESSAGE_SCHEMAS;

export type ChatTool = z.infer<typeof tool>;

export interface ParsedChat {
  body: ChatRequest;
  /** The body's own tools list once checked (an empty one for none). */
  tools: readonly ChatTool[];
  messages: ChatMessage[];
  /** The body's own list, which `messages` were checked from (what list-lineage keys on). */
  list: readonly unknown[];
}

/** Validate a parsed JSON body; throws a ProxyError naming the first bad field. */
export function parseChatRequest(raw: unknown): ParsedChat {
  requireObject(raw);
  checkBodyShape(raw, 'messages');
  const top = chatRequest.safeParse(raw);
  if (!top.success) throw issueError(top.error.issues[0]!);
  // The client's own list: the body memo says which earlier list it repeats (src/core/list-lineage.ts).
  const list = raw.messages as unknown[];
  const checked = CHECKED.reused(list);
  const messages = [...checked, ...list.slice(checked.length).map((m, i) => parseMessage(m, checked.length + i))];
  checkArgumentsDepth(messages, checked.length);
  CHECKED.keep(list, messages);
  return { body: top.data, tools: checkTools(raw.tools), messages, list };
}

const toolList = z.array(tool).nullable().optional();

/**
 * Tools lists that passed, the body's own frozen arrays: the body memo hands a list resent
 * unchanged over as the same array, which is then not checked again, and the session compares it
 * with the tools it resolved last by identity (session/heads.ts).
 */
const TOOLS_CHECKED = new FrozenResults<readonly ChatTool[]>();

function checkTools(raw: unknown): readonly ChatTool[] {
  if (raw === undefined || raw === null) return [];
  return TOOLS_CHECKED.of(raw, () => {
    const parsed = toolList.safeParse(raw);
    if (!parsed.success) throw issueError(parsed.error.issues[0]!, 'tools');
    // The schema has no defaults or transforms: a list that passed is its own parse, and the
    // body's own array keeps its identity from one request to the next.
    return raw as ChatTool[];
  });
}

/** What the checks made of each message of a list that passed them: a resent history is checked once. */
const CHECKED = new ListResults<ChatMessage>();

/** Arguments are JSON in a string: session matching and the Anthropic and Ollama encoders parse them later. */
function checkArgumentsDepth(messages: readonly ChatMessage[], from: number): void {
  messages.forEach((msg, i) => {
    if (i < from || msg.role !== 'assistant' || msg.tool_calls === undefined) return;
    msg.tool_calls.forEach((call, j) => {
      if (textDepth(call.function.arguments, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return;
      const param = `messages[${i}].tool_calls[${j}].function.arguments`;
      throw new ProxyError('json_too_deep', { param, limit: MAX_JSON_DEPTH }, { param });
    });
  });
}

function parseMessage(raw: unknown, index: number): ChatMessage {
  // The schema has no defaults or transforms: a message of a known shape is its own parse.
  if (isWellFormedMessage(raw)) return raw as ChatMessage;
  const param = `messages[${index}]`;
  requireObject(raw, param);
  const role = (raw as { role?: unknown }).role;
  if (typeof role !== 'string') {
    throw new ProxyError('invalid_request', { detail: `Missing required parameter: '${param}.role'.` }, { param: `${param}.role` });
  }
  if (!Object.hasOwn(byRole, role)) throw new ProxyError('unknown_role', { role, param: `${param}.role` }, { param: `${param}.role` });
  const parsed = byRole[role as keyof typeof byRole].safeParse(raw);
  if (!parsed.success) throw issueError(parsed.error.issues[0]!, param);
  return parsed.data as ChatMessage;
}
