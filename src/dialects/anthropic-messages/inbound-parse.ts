/**
 * The inbound wire: an Anthropic Messages request body (`POST /v1/messages`), validated once with
 * the schema below, every error naming the field (`messages[3].content[0].tool_use_id`). Shapes
 * follow anthropics/anthropic-sdk-typescript `src/resources/messages/messages.ts`
 * (`MessageCreateParams`); unknown top-level fields are ignored (Claude Code sends beta fields such
 * as `context_management`), unknown block types are 400s naming the block.
 */
import { z } from 'zod';
import { ProxyError } from '../../core/errors.js';
import { checkBodyShape, issueError, requireObject } from '../client-body.js';
import { ListResults } from '../../core/list-lineage.js';

/** `cache_control` is read and dropped: the proxy places its own breakpoints (docs/inbound.md). */
const cacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).loose().nullable().optional();

const textBlock = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl }).loose();
const imageSource = z.discriminatedUnion('type', [
  z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string().min(1) }).loose(),
  z.object({ type: z.literal('url'), url: z.string().min(1) }).loose(),
]);
const imageBlock = z.object({ type: z.literal('image'), source: imageSource, cache_control: cacheControl }).loose();
const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
}).loose();
const toolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
}).loose();
/** Echoed reasoning: checked for shape, then ignored (the log's copy goes upstream). */
const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() }).loose();
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() }).loose();

/** The blocks each role may hold, by `type`; each block is checked on its own, so an error names it. */
const BLOCKS = {
  user: { text: textBlock, image: imageBlock, tool_result: toolResultBlock },
  assistant: { text: textBlock, tool_use: toolUseBlock, thinking: thinkingBlock, redacted_thinking: redactedThinkingBlock },
  system: { text: textBlock },
} as const;
type Role = keyof typeof BLOCKS;

export type ClientTextBlock = z.infer<typeof textBlock>;
export type ClientImageBlock = z.infer<typeof imageBlock>;
export type UserBlock = ClientTextBlock | ClientImageBlock | z.infer<typeof toolResultBlock>;
export type AssistantBlock = ClientTextBlock | z.infer<typeof toolUseBlock> | z.infer<typeof thinkingBlock> | z.infer<typeof redactedThinkingBlock>;
export type ClientMessage =
  | { role: 'user'; content: string | UserBlock[] }
  | { role: 'assistant'; content: string | AssistantBlock[] }
  /** A system update inside the conversation (the SDK's `MessageParam` allows it; Claude Code sends it). */
  | { role: 'system'; content: string | ClientTextBlock[] };

/**
 * A client tool (`{name, description, input_schema}`; `type` absent or `custom`). Server tools
 * (`web_search_20250305`, ...) carry another `type` and no schema: they are left out (docs/inbound.md).
 */
const tool = z.object({
  type: z.string().nullable().optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().optional(),
  cache_control: cacheControl,
}).loose();

const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }).loose(),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }).loose(),
  z.object({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }).loose(),
  z.object({ type: z.literal('none') }).loose(),
]);

const thinking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }).loose(),
  z.object({ type: z.literal('adaptive') }).loose(),
  z.object({ type: z.literal('disabled') }).loose(),
]);

const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

const fields = {
  model: z.string().min(1),
  messages: z.array(z.unknown()).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
  output_config: z.object({ effort: z.enum(EFFORTS).nullable().optional() }).loose().nullable().optional(),
};

const messagesRequest = z.object({
  ...fields,
  max_tokens: z.number().int().positive(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.object({ user_id: z.string().nullable().optional() }).loose().optional(),
}).loose();

/**
 * The top-level fields the proxy reads or places itself (`cache_control`: its own markers, never the
 * client's); the rest (`metadata`, `top_k`, `service_tier`, `container`, `mcp_servers`, ...) pass to
 * an upstream of this wire.
 */
export const READ_FIELDS: ReadonlySet<string> = new Set([...Object.keys(fields), 'max_tokens', 'stream', 'temperature', 'top_p', 'stop_sequences', 'cache_control']);

/** `POST /v1/messages/count_tokens`: the same conversation, no reply settings. */
const countRequest = z.object(fields).loose();

export type MessagesRequest = z.infer<typeof messagesRequest>;
export type ClientTool = z.infer<typeof tool>;
export type ClientToolChoice = z.infer<typeof toolChoice>;

export interface ParsedMessages {
  /** The body; for a count, the fields a reply needs are absent. */
  body: Partial<MessagesRequest> & z.infer<typeof countRequest>;
  messages: ClientMessage[];
  /** The body's own list, which `messages` were checked from (what list-lineage keys on). */
  list: readonly unknown[];
  /** The body's own `tools` value, which the checked `body.tools` was parsed from. */
  rawTools: unknown;
}

/** Validate a parsed JSON body; throws a ProxyError naming the first bad field. */
export function parseMessagesRequest(raw: unknown, opts: { count?: boolean } = {}): ParsedMessages {
  requireObject(raw);
  checkBodyShape(raw, 'messages');
  const top = (opts.count === true ? countRequest : messagesRequest).safeParse(raw);
  if (!top.success) throw issueError(top.error.issues[0]!);
  // The client's own list: the body memo says which earlier list it repeats (src/core/list-lineage.ts).
  const list = raw.messages as unknown[];
  const checked = CHECKED.reused(list);
  const messages = [...checked, ...list.slice(checked.length).map((m, i) => parseMessage(m, checked.length + i))];
  CHECKED.keep(list, messages);
  return { body: top.data, messages, list, rawTools: raw.tools };
}

/** What the checks made of each message of a list that passed them: a resent history is checked once. */
const CHECKED = new ListResults<ClientMessage>();

function parseMessage(raw: unknown, index: number): ClientMessage {
  const param = `messages[${index}]`;
  requireObject(raw, param);
  const role = raw.role;
  if (typeof role !== 'string') {
    throw new ProxyError('invalid_request', { detail: `Missing required parameter: '${param}.role'.` }, { param: `${param}.role` });
  }
  if (!Object.hasOwn(BLOCKS, role)) {
    const detail = `Invalid value for '${param}.role': "${role}"; expected user, assistant or system.`;
    throw new ProxyError('invalid_request', { detail }, { param: `${param}.role` });
  }
  const content = raw.content;
  if (typeof content === 'string') return { role, content } as ClientMessage;
  if (!Array.isArray(content)) {
    const detail = content === undefined ? `Missing required parameter: '${param}.content'.` : `Invalid value for '${param}.content': expected a string or a list of content blocks.`;
    throw new ProxyError('invalid_request', { detail }, { param: `${param}.content` });
  }
  const blocks = content.map((block: unknown, j) => parseBlock(role as Role, block, `${param}.content[${j}]`));
  return { role, content: blocks } as ClientMessage;
}

function parseBlock(role: Role, raw: unknown, param: string): unknown {
  requireObject(raw, param);
  const allowed: Record<string, z.ZodType> = BLOCKS[role];
  const type = raw.type;
  if (typeof type !== 'string' || !Object.hasOwn(allowed, type)) {
    const detail = `Invalid value for '${param}.type': ${JSON.stringify(type)}; a ${role} message takes ${Object.keys(allowed).join(', ')} blocks here.`;
    throw new ProxyError('invalid_request', { detail }, { param: `${param}.type` });
  }
  const parsed = allowed[type]!.safeParse(raw);
  if (!parsed.success) throw issueError(parsed.error.issues[0]!, param);
  return parsed.data;
}
