/**
 * NeutralRequest -> an openai-chat request. Every wire object is built in a fixed key order and
 * serialised with JSON.stringify, which keeps insertion order: equal requests give equal bytes,
 * whatever order the caller's objects hold their keys in. Tools are the exception on purpose:
 * they go as the client first sent them (the frozen catalog), key order included.
 */
import { planMarks, sentMode, type MarkPlan } from '../../cache-hints/openai-breakpoints.js';
import type { DialectRoute, EncodedRequest, WireHints } from '../../core/route.js';
import { STAND_IN_SIGNATURE } from '../../core/gemini-family.js';
import type { AssistantMessage, ContentPart, NeutralMessage, NeutralRequest, OpaqueBlock } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { EMPTY, encodeList } from '../list-body.js';
import type { WireAssistantMessage, WireContentPart, WireMessage, WireTextPart, WireToolCall } from './wire-types.js';
import { jsonHeaders } from '../wire-headers.js';
import { addExtraFields } from '../extra-fields.js';
import { stringifyWith, toolsJson } from '../tools-json.js';

export const CHAT_COMPLETIONS_PATH = '/chat/completions';

export function encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest {
  const rest: Record<string, unknown> = {};
  // OpenAI refuses an empty tools array.
  if (req.tools.length > 0) rest.tools = req.tools;
  const p = req.params;
  if (p.tool_choice !== undefined) rest.tool_choice = p.tool_choice;
  if (p.parallel_tool_calls !== undefined) rest.parallel_tool_calls = p.parallel_tool_calls;
  if (p.temperature !== undefined) rest.temperature = p.temperature;
  if (p.top_p !== undefined) rest.top_p = p.top_p;
  if (p.max_tokens !== undefined) rest[route.maxTokensField ?? 'max_tokens'] = p.max_tokens;
  if (p.stop !== undefined) rest.stop = p.stop;
  if (p.seed !== undefined) rest.seed = p.seed;
  if (p.presence_penalty !== undefined) rest.presence_penalty = p.presence_penalty;
  if (p.frequency_penalty !== undefined) rest.frequency_penalty = p.frequency_penalty;
  if (p.response_format !== undefined) rest.response_format = p.response_format;
  if (p.reasoning_effort !== undefined) rest.reasoning_effort = p.reasoning_effort;
  // The client's own fields the proxy does not read, for an upstream of the client's wire; never
  // over a field the proxy sets.
  addExtraFields(rest, p, 'openai-chat', ['model', 'messages']);
  if (hints.bodyKey && hints.sessionKey !== undefined) rest.prompt_cache_key = hints.sessionKey;
  const plan = hints.promptCache === undefined ? undefined : planMarks(req);
  const mode = plan === undefined ? undefined : sentMode(hints.promptCache!, plan);
  if (mode !== undefined) rest.prompt_cache_options = { mode };
  // Top-level automatic caching, for routes that take it (OpenRouter to Claude); cache-hints decides.
  if (hints.cacheControl !== undefined) {
    rest.cache_control = hints.cacheControl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  }
  if (opts.stream) {
    rest.stream = true;
    rest.stream_options = { include_usage: true };
  }
  // The same bytes JSON.stringify of the whole body would give, assembled from each message's
  // UTF-8 serialisation kept from earlier requests: only what is new is serialised (list-body.ts).
  const variant = `openai-chat\u0000${route.reasoningOut}\u0000${route.reasoningOnToolTurns}\u0000${route.standInSignatures === true}`;
  const tail = req.tools.length > 0 ? stringifyWith(rest, { tools: toolsJson(req.tools, 'openai-chat', (t) => t) }) : JSON.stringify(rest);
  const head = Buffer.from(`{"model":${JSON.stringify(req.model)},"messages":[`);
  const end = Buffer.from(tail === '{}' ? ']}' : '],' + tail.slice(1));
  const messages = req.messages;
  const forms = messages.map((_, i) => formOf(plan, i));
  const body = encodeList(head, {
    variant,
    items: messages,
    forms,
    serialise: (i) => {
      const wire = encodeMessage(messages[i]!, route, opts);
      return Buffer.from(JSON.stringify(forms[i] === '' ? wire : asParts(wire, forms[i] === 'marked')));
    },
    lead: (_, prev) => (prev === undefined ? EMPTY : COMMA),
  }, end, opts);
  const encoded: EncodedRequest = { path: CHAT_COMPLETIONS_PATH, headers: jsonHeaders(route, hints), body };
  if (plan !== undefined && mode !== undefined) encoded.promptCache = { mode, marks: plan.marks };
  return encoded;
}

/** How a message goes: as it is (''), as content parts, or as parts with a breakpoint on the last. */
type Form = '' | 'parts' | 'marked';

function formOf(plan: MarkPlan | undefined, i: number): Form {
  if (plan === undefined || !plan.parts.has(i)) return '';
  return plan.marks.includes(i) ? 'marked' : 'parts';
}

const COMMA = Buffer.from(',');

export function encodeMessage(m: NeutralMessage, route: DialectRoute, opts: EncodeOptions): WireMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: typeof m.content === 'string' ? m.content : m.content.map((part) => encodePart(part, opts)) };
    case 'assistant':
      return encodeAssistant(m, route);
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content };
  }
}

/**
 * A system, user or tool message with its content as parts, a breakpoint on the last when `mark`
 * (OpenAI takes one on text and image parts; a plain string cannot carry it).
 */
function asParts(wire: WireMessage, mark: boolean): WireMessage {
  if (wire.role === 'assistant') return wire;
  const content: WireContentPart[] = typeof wire.content === 'string' ? [{ type: 'text', text: wire.content }] : wire.content.map((p) => ({ ...p }));
  const last = content.at(-1);
  if (mark && last !== undefined) last.prompt_cache_breakpoint = { mode: 'explicit' };
  if (wire.role === 'user') return { ...wire, content };
  return { ...wire, content: content as WireTextPart[] };
}

function encodePart(part: ContentPart, opts: EncodeOptions): WireContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const image = opts.resolveImage(part.sha256);
  const url = `data:${image.mime};base64,${image.base64}`;
  return { type: 'image_url', image_url: part.detail === undefined ? { url } : { url, detail: part.detail } };
}

/**
 * Where an assistant turn's reasoning goes, first rule that applies:
 * 1. it carries an `openrouter.reasoning_details` block: `reasoning_details` = the block's data,
 *    unchanged, and no reasoning text beside it (OpenRouter's examples send it alone; this also
 *    wins over rule 2: OpenRouter turns the details into what its upstream reads);
 * 2. `route.reasoningOnToolTurns` and the turn has tool calls: `reasoning_content` = the thinking,
 *    or "" when there is none (DeepSeek answers 400 when it is missing on a tool-call turn);
 * 3. `route.reasoningOut`: the thinking, when there is some, as `reasoning_content` or
 *    `reasoning`, or not at all (`none`).
 * Gemini thought signatures go on the calls they came with (`before_call` = that call's index).
 * Blocks of other kinds are not this wire's and are left out; the window already dropped blocks
 * of other origins.
 */
function encodeAssistant(m: AssistantMessage, route: DialectRoute): WireAssistantMessage {
  const calls = m.tool_calls ?? [];
  const blocks = m.blocks ?? [];
  const details = blocks.find((b) => b.kind === 'openrouter.reasoning_details');
  const thinking = m.thinking !== undefined && m.thinking.length > 0 ? m.thinking : undefined;

  // OpenAI wants null beside tool calls; a turn with neither content nor calls gets "" (never null).
  const content = m.content !== null && m.content.length > 0 ? m.content : calls.length > 0 ? null : '';
  const out: WireAssistantMessage = { role: 'assistant', content };
  if (details !== undefined) {
    out.reasoning_details = details.data;
  } else if (route.reasoningOnToolTurns && calls.length > 0) {
    out.reasoning_content = thinking ?? '';
  } else if (thinking !== undefined && route.reasoningOut !== 'none') {
    out[route.reasoningOut] = thinking;
  }
  if (calls.length > 0) out.tool_calls = encodeToolCalls(m, blocks, route.standInSignatures === true);
  return out;
}

function encodeToolCalls(m: AssistantMessage, blocks: readonly OpaqueBlock[], standIn: boolean): WireToolCall[] {
  const calls: WireToolCall[] = (m.tool_calls ?? []).map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }));
  for (const block of blocks) {
    if (block.kind !== 'gemini.thought_signature' || block.before_call === undefined) continue;
    const call = calls[block.before_call];
    if (call !== undefined) call.extra_content = { google: { thought_signature: block.data } };
  }
  // A step's first call that Gemini did not sign (another model made it): the stand-in, on every turn.
  if (standIn && calls[0] !== undefined && calls[0].extra_content === undefined) calls[0].extra_content = { google: { thought_signature: STAND_IN_SIGNATURE } };
  return calls;
}
