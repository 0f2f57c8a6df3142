/**
 * NeutralRequest -> a Responses request (`POST /responses`), stateless: `store: false`, the whole
 * conversation in `input` every time, as Codex sends it. Objects are built in a fixed key order, so
 * equal requests give equal bytes.
 *
 * The leading system message goes as `instructions`, the field Codex uses, whose cache hit rates
 * were measured at 84-95% (docs/decisions.md, Responses keep_reasoning); any later system message
 * (the `append` policy puts a changed system prompt at the end) is a system message item where it
 * stands, so the instructions, and every byte before the change, stay as they were. A route that
 * places OpenAI's breakpoints sends the system prompt as a leading developer item instead, since
 * `instructions` cannot carry one (docs/decisions.md, OpenAI explicit breakpoints).
 */
import { planMarks, sentMode, type MarkPlan } from '../../cache-hints/openai-breakpoints.js';
import type { DialectRoute, EncodedRequest, WireHints } from '../../core/route.js';
import type { AssistantMessage, ContentPart, NeutralMessage, NeutralRequest, OpaqueBlock, RequestParams, ToolSpec } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { EMPTY, encodeList } from '../list-body.js';
import { asArray, asObject, asString } from '../wire-read.js';
import type { FunctionTool, InputImage, InputItem, InputText, ReasoningInputItem, ReasoningParam, ResponsesRequest } from './wire-types.js';
import { jsonHeaders } from '../wire-headers.js';
import { addExtraFields } from '../extra-fields.js';
import { stringifyWith, toolsJson } from '../tools-json.js';

export const RESPONSES_PATH = '/responses';
export const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

export function encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest {
  const plan = hints.promptCache === undefined ? undefined : planMarks(req);
  const first = req.messages[0];
  // `instructions` cannot carry a breakpoint: with breakpoints the system prompt is a developer item in `input`.
  const instructions = first?.role === 'system' && plan === undefined ? first.content : undefined;
  const skip = instructions === undefined ? 0 : 1;
  // The body in two parts, the fields before `input` and those after, which go around the list.
  const before: Partial<ResponsesRequest> = { model: req.model };
  if (instructions !== undefined) before.instructions = instructions;
  const body: Partial<ResponsesRequest> = {};
  const p = req.params;
  const toolChoice = toolChoiceOf(p.tool_choice);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (p.parallel_tool_calls !== undefined) body.parallel_tool_calls = p.parallel_tool_calls;
  if (p.temperature !== undefined) body.temperature = p.temperature;
  if (p.top_p !== undefined) body.top_p = p.top_p;
  if (p.max_tokens !== undefined) body.max_output_tokens = p.max_tokens;
  // The client's own parts of `text` (verbosity) and `include` join the proxy's, which come first.
  const extra = p.extra?.wire === 'openai-responses' ? p.extra.fields : {};
  const format = textFormatOf(p.response_format);
  const text = { ...(format === undefined ? {} : { format }), ...asObject(extra.text) };
  if (Object.keys(text).length > 0) body.text = text;
  const asked = (asArray(extra.include) ?? []).filter((i): i is string => typeof i === 'string');
  const keep = keepsReasoning(route, asked);
  const reasoning = reasoningOf(p, keep);
  if (reasoning !== undefined) body.reasoning = reasoning;
  // The proxy's own entry first, then the client's others; never the encrypted reasoning on a route that turns it off.
  const include = [...(keep ? [ENCRYPTED_REASONING] : []), ...asked.filter((i) => i !== ENCRYPTED_REASONING)];
  if (include.length > 0) body.include = include;
  body.store = false;
  addExtraFields(body, p, 'openai-responses', [...Object.keys(before), 'input', 'tools']);
  if (hints.bodyKey && hints.sessionKey !== undefined) body.prompt_cache_key = hints.sessionKey;
  const mode = plan === undefined ? undefined : sentMode(hints.promptCache!, plan);
  if (mode !== undefined) body.prompt_cache_options = { mode };
  if (opts.stream) body.stream = true;
  // Not on this wire: stop, seed, presence_penalty, frequency_penalty (the API has no such fields).

  // Each message's items, kept from earlier requests where they can be (list-body.ts).
  const messages = req.messages;
  const forms = messages.map((m, i) => (i < skip ? INSTRUCTIONS : formOf(m, i, plan)));
  const head = JSON.stringify(before);
  // The tools lead the fields after `input`, written from their kept text (tools-json.ts).
  const tail = req.tools.length > 0
    ? stringifyWith({ tools: req.tools, ...body }, { tools: toolsJson(req.tools, 'openai-responses', (t) => t.map(encodeTool)) })
    : JSON.stringify(body);
  const bytes = encodeList(
    Buffer.from(`${head.slice(0, -1)},"input":[`),
    {
      variant: 'openai-responses',
      items: messages,
      forms,
      serialise: (i) => {
        if (i < skip) return EMPTY;
        const items = plan === undefined ? encodeMessage(messages[i]!, opts) : markedItems(messages[i]!, i, plan, opts);
        return items.length === 0 ? EMPTY : Buffer.from(JSON.stringify(items).slice(1, -1));
      },
      lead: (_, prev) => (prev === undefined ? EMPTY : COMMA),
    },
    Buffer.from(tail === '{}' ? ']}' : '],' + tail.slice(1)),
    opts,
  );
  const encoded: EncodedRequest = { path: RESPONSES_PATH, headers: jsonHeaders(route, hints), body: bytes };
  if (plan !== undefined && mode !== undefined) encoded.promptCache = { mode, marks: plan.marks };
  return encoded;
}

/**
 * How a message goes, beside the route options (none shape this wire's items: reasoning of another
 * origin was left out by the window): the leading system prompt as `instructions` (nothing in
 * `input`) or as a developer message, a message whose last part is a breakpoint's place (`parts`),
 * or holds one (`marked`). Its items' bytes depend on the message and this only.
 */
const INSTRUCTIONS = 'instructions';

function formOf(m: NeutralMessage, i: number, plan: MarkPlan | undefined): string {
  if (plan === undefined) return '';
  const role = m.role === 'system' && i === 0 ? 'developer' : '';
  const part = !plan.parts.has(i) ? '' : plan.marks.includes(i) ? 'marked' : 'parts';
  return role === '' || part === '' ? role + part : `${role}:${part}`;
}

const COMMA = Buffer.from(',');

/**
 * A message's items with breakpoints on: the leading system prompt as a developer message, a tool
 * output that can carry a marker as an `input_text` part, the marker on the item's last part.
 */
function markedItems(m: NeutralMessage, i: number, plan: MarkPlan, opts: EncodeOptions): InputItem[] {
  const items = encodeMessage(m, opts);
  if (m.role === 'system' && i === 0 && items[0]?.type === 'message') items[0].role = 'developer';
  if (!plan.parts.has(i)) return items;
  const item = items.at(-1);
  let last: InputText | InputImage | undefined;
  if (item?.type === 'function_call_output') {
    const output: InputText[] = typeof item.output === 'string' ? [{ type: 'input_text', text: item.output }] : item.output;
    item.output = output;
    last = output.at(-1);
  } else if (item?.type === 'message') {
    const part = item.content.at(-1);
    if (part?.type === 'input_text' || part?.type === 'input_image') last = part;
  }
  if (last !== undefined && plan.marks.includes(i)) last.prompt_cache_breakpoint = { mode: 'explicit' };
  return items;
}

/**
 * Whether this request keeps the reply's reasoning: the route's `keep_reasoning` when it says,
 * else whether the client asked for encrypted reasoning itself, as Codex does (docs/inbound.md,
 * Encrypted reasoning).
 */
export function keepsReasoning(route: DialectRoute, include: readonly string[]): boolean {
  return route.keepReasoning ?? include.includes(ENCRYPTED_REASONING);
}

/**
 * Sent when the client asked for an effort or a summary, or the request keeps reasoning (a model
 * that does not reason refuses the field, so it is never sent otherwise). Summaries are asked for,
 * as the client named them or `auto`: they are the reply's thinking. A request that keeps
 * reasoning asks for `context: "all_turns"`: under "current_turn" earlier turns' reasoning leaves
 * the prompt, so a turn's first request would differ from the last one before it at its first
 * reasoning item (docs/decisions.md, Responses keep_reasoning).
 */
function reasoningOf(p: RequestParams, keep: boolean): ReasoningParam | undefined {
  if (p.reasoning_effort === undefined && p.reasoning_summary === undefined && !keep) return undefined;
  const out: ReasoningParam = {};
  if (p.reasoning_effort !== undefined) out.effort = p.reasoning_effort;
  out.summary = (p.reasoning_summary as ReasoningParam['summary'] | undefined) ?? 'auto';
  if (keep) out.context = 'all_turns';
  return out;
}

/** A chat-completions tool as a Responses function tool; `strict` false unless it said true. */
function encodeTool(t: ToolSpec): FunctionTool {
  const out: Partial<FunctionTool> = { type: 'function', name: t.function.name };
  if (t.function.description !== undefined) out.description = t.function.description;
  out.parameters = t.function.parameters ?? { type: 'object', properties: {} };
  out.strict = t.function.strict ?? false;
  return out as FunctionTool;
}

/** `{"type":"function","function":{"name":N}}` is `{"type":"function","name":N}` here; strings pass. */
function toolChoiceOf(raw: unknown): unknown {
  const obj = asObject(raw);
  if (obj === undefined) return raw;
  const name = asString(asObject(obj.function)?.name);
  return obj.type === 'function' && name !== undefined ? { type: 'function', name } : raw;
}

/** `response_format` as `text.format`: json_schema's fields move up a level; json_object and text pass. */
function textFormatOf(raw: unknown): unknown {
  const rf = asObject(raw);
  if (rf === undefined) return undefined;
  if (rf.type !== 'json_schema') return rf;
  return { type: 'json_schema', ...(asObject(rf.json_schema) ?? {}) };
}

export function encodeMessage(m: NeutralMessage, opts: EncodeOptions): InputItem[] {
  switch (m.role) {
    case 'system':
      return [{ type: 'message', role: 'system', content: [{ type: 'input_text', text: m.content }] }];
    case 'user': {
      const content = typeof m.content === 'string' ? [{ type: 'input_text' as const, text: m.content }] : m.content.map((p) => encodePart(p, opts));
      return [{ type: 'message', role: 'user', content }];
    }
    case 'assistant':
      return encodeAssistant(m);
    case 'tool':
      return [{ type: 'function_call_output', call_id: m.tool_call_id, output: m.content }];
  }
}

function encodePart(part: ContentPart, opts: EncodeOptions): InputText | InputImage {
  if (part.type === 'text') return { type: 'input_text', text: part.text };
  const image = opts.resolveImage(part.sha256);
  return { type: 'input_image', image_url: `data:${image.mime};base64,${image.base64}`, detail: part.detail ?? 'auto' };
}

/**
 * An assistant turn as output items: the reasoning items made before any call, the text, then each
 * call preceded by the reasoning items made just before it (`before_call`), and any made after the
 * last call. Its thinking text does not go: this wire reads reasoning only as the encrypted items.
 */
function encodeAssistant(m: AssistantMessage): InputItem[] {
  const calls = m.tool_calls ?? [];
  const reasoning = (m.blocks ?? []).filter((b) => b.kind === 'responses.reasoning');
  const at = (i: number): InputItem[] => reasoning.filter((b) => Math.min(b.before_call ?? 0, calls.length) === i).flatMap(reasoningItem);
  const out: InputItem[] = at(0);
  if (m.content !== null && m.content.length > 0) {
    out.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: m.content }] });
  }
  calls.forEach((c, i) => {
    if (i > 0) out.push(...at(i));
    out.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments });
  });
  if (calls.length > 0) out.push(...at(calls.length));
  return out;
}

/** The item as the server gave it, less its id and status; one without encrypted content is dropped. */
function reasoningItem(block: OpaqueBlock): ReasoningInputItem[] {
  const item = asObject(block.data);
  const encrypted = asString(item?.encrypted_content);
  if (item === undefined || encrypted === undefined) return [];
  const out: Partial<ReasoningInputItem> = { type: 'reasoning', summary: asArray(item.summary) ?? [] };
  const content = asArray(item.content);
  if (content !== undefined) out.content = content;
  out.encrypted_content = encrypted;
  return [out as ReasoningInputItem];
}
