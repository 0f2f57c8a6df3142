/**
 * NeutralRequest -> an openai-chat request. Every wire object is built in a fixed key order and
 * serialised with JSON.stringify, which keeps insertion order: equal requests give equal bytes,
 * whatever order the caller's objects hold their keys in. Tools are the exception on purpose:
 * they go as the client first sent them (the frozen catalog), key order included.
 */
import { planMarks, sentMode, type MarkPlan } from '../../cache-hints/openai-breakpoints.js';
import type { DialectRoute, EncodedRequest, WireHints } from '../../core/route.js';
import type { AssistantMessage, ContentPart, NeutralMessage, NeutralRequest, OpaqueBlock } from '../../core/types.js';
import type { EncodeOptions, KeptList } from '../types.js';
import type { WireAssistantMessage, WireContentPart, WireMessage, WireTextPart, WireToolCall } from './wire-types.js';
import { jsonHeaders } from '../wire-headers.js';
import { addExtraFields } from '../extra-fields.js';

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
  // UTF-8 serialisation kept from earlier requests: only what is new is serialised and encoded,
  // the rest is copied (a 1 MB conversation is one copy, not a join, a re-encode and a copy).
  const variant = `openai-chat\u0000${route.reasoningOut}\u0000${route.reasoningOnToolTurns}`;
  const tail = JSON.stringify(rest);
  const head = Buffer.from(`{"model":${JSON.stringify(req.model)},"messages":[`);
  const end = Buffer.from(tail === '{}' ? ']}' : '],' + tail.slice(1));
  const body = encodeList(head, req.messages, end, { variant, plan, route, opts });
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

const COMMA = 0x2c;

interface ListContext {
  variant: string;
  plan: MarkPlan | undefined;
  route: DialectRoute;
  opts: EncodeOptions;
}

/**
 * `head`, the messages' serialisations joined by commas, `end`, in one allocation. The messages a
 * request shares with the last body built for its conversation (the same objects, going the same
 * way) are copied from that body in one piece; only the rest are looked up or serialised. So a
 * long conversation's request costs one copy of its history, not a step per message.
 */
function encodeList(head: Buffer, messages: readonly NeutralMessage[], end: Buffer, c: ListContext): Buffer {
  const n = messages.length;
  const forms: Form[] = new Array<Form>(n);
  for (let i = 0; i < n; i++) forms[i] = formOf(c.plan, i);
  const first = messages[0];
  const kept = first === undefined ? undefined : c.opts.lists?.get(first);
  const shared = kept === undefined || kept.variant !== c.variant ? 0 : sharedLength(kept, messages, forms);
  const prefix = shared === 0 ? EMPTY : kept!.bytes.subarray(kept!.start, kept!.start + kept!.ends[shared - 1]!);

  const fresh: Buffer[] = [];
  // Serialisations made here are kept once the body is assembled: what the memo handed back may be
  // a view of its store that keeping something new would overwrite (SerialisationMemo).
  const made: Made[] = [];
  let size = head.length + prefix.length + end.length;
  for (let i = shared; i < n; i++) {
    const form = forms[i]!;
    const bytes = messageBytes(messages[i]!, form === '' ? c.variant : `${c.variant}\u0000${form}`, c, form, made);
    fresh.push(bytes);
    size += bytes.length + (i > 0 ? 1 : 0);
  }

  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  out.set(prefix, head.length);
  let at = head.length + prefix.length;
  const ends = shared === 0 ? [] : kept!.ends.slice(0, shared);
  for (let j = 0; j < fresh.length; j++) {
    if (shared + j > 0) out[at++] = COMMA;
    out.set(fresh[j]!, at);
    at += fresh[j]!.length;
    ends.push(at - head.length);
  }
  out.set(end, at);
  for (const m of made) c.opts.memo?.set(m.msg, m.variant, m.bytes);
  if (first !== undefined && n >= MIN_KEPT_LIST) c.opts.lists?.set(first, { variant: c.variant, items: messages, forms, bytes: out, start: head.length, ends });
  return out;
}

const EMPTY = Buffer.alloc(0);

/**
 * Shorter conversations are joined message by message, which costs little, and their bodies are
 * not kept: a kept body lives until it is evicted, long enough to reach V8's old generation, and a
 * thousand short sessions' bodies churning through the memo held tens of MiB of garbage
 * (docs/decisions.md, Memory follows live sessions).
 */
const MIN_KEPT_LIST = 64;

/** How many leading messages are the kept body's, the same objects in the same form. */
function sharedLength(kept: KeptList, messages: readonly NeutralMessage[], forms: readonly Form[]): number {
  const limit = Math.min(kept.items.length, messages.length);
  let i = 0;
  while (i < limit && kept.items[i] === messages[i] && kept.forms[i] === forms[i]) i++;
  return i;
}

interface Made {
  msg: NeutralMessage;
  variant: string;
  bytes: Buffer;
}

/** Each message's wire JSON as UTF-8, from the caller's memo (per the route options that shape it) or made and noted in `made`. */
function messageBytes(m: NeutralMessage, variant: string, c: ListContext, form: Form, made: Made[]): Buffer {
  const kept = c.opts.memo?.get(m, variant);
  if (kept !== undefined) return kept;
  const wire = encodeMessage(m, c.route, c.opts);
  const bytes = Buffer.from(JSON.stringify(form === '' ? wire : asParts(wire, form === 'marked')));
  made.push({ msg: m, variant, bytes });
  return bytes;
}

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
  if (calls.length > 0) out.tool_calls = encodeToolCalls(m, blocks);
  return out;
}

function encodeToolCalls(m: AssistantMessage, blocks: readonly OpaqueBlock[]): WireToolCall[] {
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
  return calls;
}
