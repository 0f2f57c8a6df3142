/**
 * A Responses request in neutral terms. `instructions` and the leading developer and system
 * messages are the system prompt (Codex sends no `instructions`: its prompt is the first developer
 * message). The assistant side of the conversation (assistant messages, function calls and
 * reasoning items in a row) is one assistant turn, as the log holds a reply; each
 * `function_call_output` is a tool result. What the client echoes of a reply's reasoning is ignored,
 * as on the chat endpoint: the log's copy goes upstream, and only to its origin (docs/inbound.md).
 *
 * Dropped, because the neutral request (and so every upstream wire) has no place for them:
 * - tools other than `function` (hosted tools such as web_search run at OpenAI; Codex's `namespace`
 *   and freeform `custom` tools have no form on the chat and Anthropic wires);
 * - a `tool_choice` naming a hosted tool or `allowed_tools` (the model chooses: `auto`);
 * - `text.format` other than json_object and json_schema; `reasoning.summary` (summaries are always
 *   asked of a Responses upstream); `store`; item ids and statuses;
 * - images inside a `function_call_output` (a tool result is text on every wire): `[image]` instead.
 * A `compaction_trigger` is the proxy's compaction prompt as a user message, and a compaction item
 * the proxy made is its summary as one (compaction.ts).
 * Top-level fields the proxy does not read (`metadata`, `service_tier`, `safety_identifier`,
 * `truncation`, `user`, `client_metadata`, ...), `text` less its `format` and `include` less the
 * encrypted reasoning go to a Responses upstream only, as the client sent them (`extra`).
 */
import type { AssistantMessage, ContentPart as NeutralPart, NeutralMessage, RequestParams, ToolSpec } from '../../core/types.js';
import { ProxyError } from '../../core/errors.js';
import type { ImageSink } from '../types.js';
import { extraFields } from '../extra-fields.js';
import { COMPACTION_PROMPT } from '../../core/compaction-prompt.js';
import { compactedText } from './compaction.js';
import { READ_FIELDS, type ContentPart, type FunctionToolParam, type InputItem, type ResponsesBody } from './inbound-parse.js';

export interface Conversation {
  system: string | undefined;
  messages: NeutralMessage[];
}

/** Shown in place of an image a tool result held. */
export const TOOL_IMAGE = '[image]';

export function toConversation(instructions: string | null | undefined, items: readonly InputItem[], images: ImageSink): Conversation {
  const head: string[] = instructions === undefined || instructions === null || instructions === '' ? [] : [instructions];
  let i = 0;
  for (; i < items.length; i++) {
    const item = items[i]!;
    if (item.type !== 'message' || (item.role !== 'developer' && item.role !== 'system')) break;
    head.push(textOf(item.content));
  }
  const out: NeutralMessage[] = [];
  let turn: AssistantMessage | undefined;
  const flush = (): void => {
    if (turn === undefined) return;
    if (turn.content === '' && (turn.tool_calls?.length ?? 0) > 0) turn.content = null;
    out.push(turn);
    turn = undefined;
  };
  for (; i < items.length; i++) {
    const item = items[i]!;
    switch (item.type) {
      case 'reasoning':
        turn ??= { role: 'assistant', content: null };
        break;
      case 'function_call':
        turn ??= { role: 'assistant', content: null };
        (turn.tool_calls ??= []).push({ id: item.call_id, name: item.name, arguments: item.arguments });
        break;
      case 'compaction_trigger':
        flush();
        out.push({ role: 'user', content: COMPACTION_PROMPT });
        break;
      case 'compaction':
        flush();
        out.push({ role: 'user', content: compactedText(item.encrypted_content, `input[${i}].encrypted_content`) });
        break;
      case 'function_call_output':
        flush();
        out.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output) });
        break;
      case 'message':
        if (item.role === 'assistant') {
          turn ??= { role: 'assistant', content: null };
          turn.content = (turn.content ?? '') + textOf(item.content);
          break;
        }
        flush();
        if (item.role === 'user') out.push({ role: 'user', content: userContent(item.content, i, images) });
        else out.push({ role: 'system', content: textOf(item.content) });
        break;
    }
  }
  flush();
  return { system: head.length === 0 ? undefined : head.join('\n\n'), messages: out };
}

function textOf(content: string | readonly ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'refusal' ? p.refusal : p.type === 'input_image' ? '' : p.text)).join('');
}

function outputText(output: string | readonly ContentPart[]): string {
  if (typeof output === 'string') return output;
  return output.map((p) => (p.type === 'input_image' ? TOOL_IMAGE : p.type === 'refusal' ? p.refusal : p.text)).join('');
}

function userContent(content: string | readonly ContentPart[], index: number, images: ImageSink): string | NeutralPart[] {
  if (typeof content === 'string') return content;
  return content.map((p, j): NeutralPart => {
    if (p.type !== 'input_image') return { type: 'text', text: p.type === 'refusal' ? p.refusal : p.text };
    const param = `input[${index}].content[${j}].image_url`;
    if (p.image_url === undefined || p.image_url === null) {
      throw new ProxyError('invalid_request', { detail: `'${param}' is required: the proxy reads images as data URLs, not file ids.` }, { param });
    }
    return images(p.image_url, p.detail ?? undefined, param);
  });
}

/** Function tools in the chat shape the catalog keeps; `strict` and `description` only when given. */
export function toTools(tools: readonly FunctionToolParam[]): ToolSpec[] {
  return tools.map((t) => {
    const fn: ToolSpec['function'] = { name: t.name };
    if (t.description !== undefined && t.description !== null) fn.description = t.description;
    if (t.parameters !== undefined && t.parameters !== null) fn.parameters = t.parameters;
    if (t.strict !== undefined && t.strict !== null) fn.strict = t.strict;
    return { type: 'function', function: fn };
  });
}

/** The per-request parameters, in the chat shapes the window and every encoder read. */
export function toParams(body: ResponsesBody): RequestParams {
  const p: RequestParams = {};
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) p.max_tokens = body.max_output_tokens;
  if (body.temperature !== undefined && body.temperature !== null) p.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) p.top_p = body.top_p;
  const choice = toolChoice(body.tool_choice);
  if (choice !== undefined) p.tool_choice = choice;
  if (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null) p.parallel_tool_calls = body.parallel_tool_calls;
  const format = responseFormat(body.text?.format);
  if (format !== undefined) p.response_format = format;
  const effort = body.reasoning?.effort;
  if (effort !== undefined && effort !== null) p.reasoning_effort = effort;
  const summary = body.reasoning?.summary;
  if (summary !== undefined && summary !== null) p.reasoning_summary = summary;
  const extra = extraFields({ ...body, text: textExtra(body.text) }, READ_FIELDS, 'openai-responses');
  if (extra !== undefined) p.extra = extra;
  return p;
}

/** `text` less `format`, which the proxy reads (`verbosity`, ...). */
function textExtra(text: ResponsesBody['text']): Record<string, unknown> | undefined {
  if (text === undefined || text === null) return undefined;
  const { format: _format, ...rest } = text;
  return Object.keys(rest).length > 0 ? rest : undefined;
}


/** `auto`/`none`/`required` pass; `{type: function, name}` is chat's `{type: function, function: {name}}`. */
function toolChoice(raw: unknown): unknown {
  if (raw === 'auto' || raw === 'none' || raw === 'required') return raw;
  if (raw === null || typeof raw !== 'object') return undefined;
  const obj = raw as { type?: unknown; name?: unknown };
  return obj.type === 'function' && typeof obj.name === 'string' ? { type: 'function', function: { name: obj.name } } : undefined;
}

/** `text.format` as chat's `response_format`: json_schema's fields go under `json_schema`. */
function responseFormat(format: { type: string } | null | undefined): unknown {
  if (format === undefined || format === null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') return undefined;
  const { type: _type, ...schema } = format as Record<string, unknown>;
  return { type: 'json_schema', json_schema: schema };
}
