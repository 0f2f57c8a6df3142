/**
 * A Messages request -> the neutral request every upstream wire is built from (docs/inbound.md).
 *
 * - `system` (a string or text blocks, joined by a blank line) is the session's system prompt.
 * - A `role: "system"` message inside `messages` stays a system message where it stands: the
 *   neutral conversation has them (the `append` policy writes them too), and each upstream wire
 *   renders them its own way (Anthropic: a `<system-reminder>` user block; chat: a system message).
 * - A user turn's `tool_result` blocks become tool messages, in order, before the turn's text and
 *   images; an assistant turn keeps its text and `tool_use` calls. Thinking and redacted_thinking
 *   blocks the client echoes are ignored, as the chat endpoint ignores echoed reasoning: the log's
 *   copy goes upstream, signature and all, to the origin that made it.
 * - `cache_control`, `is_error`, images inside tool results, server tools and `display` do not reach
 *   the neutral request; top-level fields the proxy does not read (`metadata`, `top_k`,
 *   `service_tier`, `container`, `mcp_servers`, `context_management`, ...) go to an Anthropic
 *   upstream only, as the client sent them (`extra`).
 */
import type { AssistantMessage, ContentPart, NeutralMessage, RequestParams, ToolSpec } from '../../core/types.js';
import type { ImageSink } from '../types.js';
import { extraFields } from '../extra-fields.js';
import { eachOnce, ListResults } from '../../core/list-lineage.js';
import { EFFORT_BUDGET } from './request-params.js';
import { READ_FIELDS, type ClientImageBlock, type ClientMessage, type ClientTextBlock, type ClientTool, type ClientToolChoice, type ParsedMessages } from './inbound-parse.js';

export interface Conversation {
  system: string | undefined;
  messages: NeutralMessage[];
}

/** What an image inside a tool result becomes: the neutral tool message holds text only. */
export const TOOL_RESULT_IMAGE = '[image]';

export function toConversation(parsed: ParsedMessages, images: ImageSink): Conversation {
  const system = parsed.body.system;
  const messages: NeutralMessage[] = [];
  // An image is handed to this request's sink, every time: such a message is not kept. A push
  // loop: Array.prototype.flat took ~10x as long on a 2,000-turn history (Node 20).
  for (const turn of eachOnce(CONVERTED, parsed.list, parsed.messages, 0, (m, i) => toNeutral(m, i, images), (m) => !hasImage(m))) messages.push(...turn);
  return { system: system === undefined ? undefined : joinText(system, '\n\n'), messages };
}

/**
 * The neutral messages made of each message of a list: a request that resends a history converts
 * its new messages only (src/core/list-lineage.ts). Frozen: they serve every request that resends
 * the message.
 */
const CONVERTED = new ListResults<readonly NeutralMessage[] | undefined>();

function hasImage(msg: ClientMessage): boolean {
  return msg.role === 'user' && typeof msg.content !== 'string' && msg.content.some((block) => block.type !== 'text' && block.type !== 'tool_result');
}

function toNeutral(msg: ClientMessage, index: number, images: ImageSink): NeutralMessage[] {
  switch (msg.role) {
    case 'system':
      return [{ role: 'system', content: joinText(msg.content, '\n\n') }];
    case 'assistant': {
      if (typeof msg.content === 'string') return [{ role: 'assistant', content: msg.content }];
      let text = '';
      const calls: NonNullable<AssistantMessage['tool_calls']> = [];
      for (const block of msg.content) {
        if (block.type === 'text') text += block.text;
        else if (block.type === 'tool_use') calls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
      }
      const out: AssistantMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
      if (calls.length > 0) out.tool_calls = calls;
      return [out];
    }
    case 'user': {
      if (typeof msg.content === 'string') return [{ role: 'user', content: msg.content }];
      const out: NeutralMessage[] = [];
      const parts: ContentPart[] = [];
      msg.content.forEach((block, j) => {
        const param = `messages[${index}].content[${j}]`;
        if (block.type === 'tool_result') {
          out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: resultText(block.content) });
        } else if (block.type === 'text') parts.push({ type: 'text', text: block.text });
        else parts.push(images(imageUrl(block), undefined, `${param}.source`));
      });
      if (parts.length === 1 && parts[0]!.type === 'text') out.push({ role: 'user', content: parts[0]!.text });
      else if (parts.length > 0) out.push({ role: 'user', content: parts });
      return out;
    }
  }
}

/** Base64 images as the data URL the image store reads; a `url` source is passed on for it to refuse. */
function imageUrl(block: ClientImageBlock): string {
  const source = block.source;
  return source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
}

function resultText(content: string | (ClientTextBlock | ClientImageBlock)[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? b.text : TOOL_RESULT_IMAGE)).join('\n');
}

function joinText(content: string | readonly ClientTextBlock[], separator: string): string {
  return typeof content === 'string' ? content : content.map((b) => b.text).join(separator);
}

/** Client tools in the neutral function form; a server tool (a `type` other than `custom`) is left out. */
export function toTools(tools: readonly ClientTool[] | undefined): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const t of tools ?? []) {
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') continue;
    const fn: ToolSpec['function'] = { name: t.name };
    if (t.description !== undefined) fn.description = t.description;
    fn.parameters = t.input_schema ?? { type: 'object', properties: {} };
    if (t.strict !== undefined) fn.strict = t.strict;
    out.push({ type: 'function', function: fn });
  }
  return out;
}

/** Anthropic's choice in OpenAI's terms, which `RequestParams` and every encoder read. */
function toolChoice(choice: ClientToolChoice, p: RequestParams): void {
  if (choice.type === 'auto') p.tool_choice = 'auto';
  else if (choice.type === 'any') p.tool_choice = 'required';
  else if (choice.type === 'none') p.tool_choice = 'none';
  else p.tool_choice = { type: 'function', function: { name: choice.name } };
  if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) p.parallel_tool_calls = false;
}

/** Anthropic's efforts in the neutral vocabulary (OpenAI's, which has no `max`). */
const EFFORT: Readonly<Record<string, string>> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh' };

/**
 * `thinking` -> `reasoning_effort`, which every encoder reads: `disabled` is `none`; a budget is the
 * largest effort whose budget (request-params.ts, the outbound table) fits in it; `adaptive` is the
 * client's `output_config.effort`, medium when it names none. An effort without `thinking` is kept.
 */
function reasoningEffort(body: ParsedMessages['body']): string | undefined {
  const effort = body.output_config?.effort ?? undefined;
  const t = body.thinking;
  if (t === undefined) return effort === undefined ? undefined : EFFORT[effort];
  if (t.type === 'disabled') return 'none';
  if (t.type === 'adaptive') return EFFORT[effort ?? 'medium'];
  let best = 'minimal';
  for (const [name, budget] of Object.entries(EFFORT_BUDGET)) if (budget <= t.budget_tokens && budget >= (EFFORT_BUDGET[best] ?? 0)) best = name;
  return best;
}

/** The per-request parameters the window passes through (and the log records). */
export function toParams(body: ParsedMessages['body']): RequestParams {
  const p: RequestParams = {};
  if (body.max_tokens !== undefined) p.max_tokens = body.max_tokens;
  if (body.temperature !== undefined) p.temperature = body.temperature;
  if (body.top_p !== undefined) p.top_p = body.top_p;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) p.stop = body.stop_sequences;
  if (body.tool_choice !== undefined) toolChoice(body.tool_choice, p);
  const effort = reasoningEffort(body);
  if (effort !== undefined) p.reasoning_effort = effort;
  const extra = extraFields(body, READ_FIELDS, 'anthropic-messages');
  if (extra !== undefined) p.extra = extra;
  return p;
}

/**
 * Body fields an explicit session id is read from. Claude Code puts its session in
 * `metadata.user_id`: a JSON string holding `session_id` (2.x), or `..._session_<uuid>` (1.x).
 */
export function idFields(body: ParsedMessages['body']): Record<string, unknown> {
  const userId = body.metadata?.user_id;
  if (typeof userId !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(userId);
    const id = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>).session_id : undefined;
    if (typeof id === 'string') return { session_id: id };
  } catch {
    // Not JSON: the older form.
  }
  const old = /_session_([0-9a-f-]{8,})$/i.exec(userId);
  return old === null ? {} : { session_id: old[1] };
}
