/**
 * NeutralRequest -> an Ollama `/api/chat` request. Every object is built in a fixed key order and
 * serialised with JSON.stringify, so equal requests give equal bytes; tools go as the client first
 * sent them (the frozen catalog).
 *
 * What Ollama's KV cache needs from the bytes (a sub-second prompt_eval is the check:
 * docs/decisions.md, Ollama prompt-eval as the cache check):
 * - `options.num_ctx` is always the route's context: a different value reloads the model, and the
 *   cache with it;
 * - `truncate: false`: a prompt over num_ctx is an error, never cut silently at the front (the
 *   window trims, and a cut prefix would miss every time);
 * - `keep_alive` defaults to 30 minutes, not Ollama's 5: an unloaded model has lost its cache.
 */
import type { DialectRoute, EncodedRequest, WireHints } from '../../core/route.js';
import type { AssistantMessage, NeutralMessage, NeutralRequest, RequestParams, ToolMessage, UserMessage } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { EMPTY, encodeList } from '../list-body.js';
import { asObject, parseJson } from '../wire-read.js';
import type { OllamaChatRequest, OllamaMessage, OllamaOptions, OllamaThink, OllamaToolCall } from './wire-types.js';
import { jsonHeaders } from '../wire-headers.js';
import { stringifyWith, toolsJson } from '../tools-json.js';

export const OLLAMA_CHAT_PATH = '/api/chat';
export const DEFAULT_KEEP_ALIVE = '30m';

export function encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest {
  const names = callNames(req.messages);
  const thinking = route.reasoningOut !== 'none';
  const body: Partial<OllamaChatRequest> = {};
  if (req.tools.length > 0) body.tools = req.tools;
  const think = thinkValue(req.params.reasoning_effort, route.thinking);
  if (think !== undefined) body.think = think;
  const format = formatOf(req.params.response_format);
  if (format !== undefined) body.format = format;
  body.options = encodeOptions(req.params, route);
  body.keep_alive = route.keepAlive ?? DEFAULT_KEEP_ALIVE;
  body.truncate = false;
  body.stream = opts.stream;
  // Ollama has no session key or cache field: its one KV slot is the cache.

  // Each message's serialisation, kept from earlier requests where it can be (list-body.ts). A tool
  // result's bytes name its call's function, found elsewhere in the request: that name is its form.
  const messages = req.messages;
  const forms = messages.map((m) => (m.role === 'tool' ? toolForm(names.get(m.tool_call_id)) : ''));
  const tail = req.tools.length > 0 ? stringifyWith(body, { tools: toolsJson(req.tools, 'ollama-chat', (t) => t) }) : JSON.stringify(body);
  const bytes = encodeList(
    Buffer.from(`{"model":${JSON.stringify(req.model)},"messages":[`),
    {
      variant: `ollama-chat\u0000${thinking}`,
      items: messages,
      forms,
      serialise: (i) => Buffer.from(JSON.stringify(encodeMessage(messages[i]!, names, opts, thinking))),
      lead: (_, prev) => (prev === undefined ? EMPTY : COMMA),
    },
    Buffer.from(tail === '{}' ? ']}' : '],' + tail.slice(1)),
    opts,
  );
  return { path: OLLAMA_CHAT_PATH, headers: jsonHeaders(route, hints), body: bytes };
}

const toolForm = (name: string | undefined): string => (name === undefined ? '' : `tool_name:${name}`);

const COMMA = Buffer.from(',');

/**
 * `think` from the client's `reasoning_effort`, else the route's `thinking` setting:
 * - "none" is false; "low", "medium", "high" and "max" go as the level (Ollama's docs list these;
 *   GPT-OSS takes only levels, and a model with a plain switch reads a level as on); "minimal" is
 *   "low" and "xhigh" is "high", the nearest level; any other word is true;
 * - the route's "enabled" is true, "disabled" false; "adaptive" or unset sends nothing, so the
 *   model's own default holds (thinking is on by default for models that think).
 */
export function thinkValue(effort: string | undefined, thinking: DialectRoute['thinking']): OllamaThink | undefined {
  if (effort !== undefined) {
    switch (effort) {
      case 'none':
        return false;
      case 'low':
      case 'medium':
      case 'high':
      case 'max':
        return effort;
      case 'minimal':
        return 'low';
      case 'xhigh':
        return 'high';
      default:
        return true;
    }
  }
  if (thinking === 'enabled') return true;
  if (thinking === 'disabled') return false;
  return undefined;
}

function encodeOptions(p: RequestParams, route: DialectRoute): OllamaOptions {
  const o: OllamaOptions = {};
  if (route.numCtx !== undefined) o.num_ctx = route.numCtx;
  if (p.max_tokens !== undefined) o.num_predict = p.max_tokens;
  if (p.temperature !== undefined) o.temperature = p.temperature;
  if (p.top_p !== undefined) o.top_p = p.top_p;
  if (p.seed !== undefined) o.seed = p.seed;
  if (p.stop !== undefined) o.stop = typeof p.stop === 'string' ? [p.stop] : p.stop;
  if (p.presence_penalty !== undefined) o.presence_penalty = p.presence_penalty;
  if (p.frequency_penalty !== undefined) o.frequency_penalty = p.frequency_penalty;
  return o;
}

/** OpenAI's `response_format` as Ollama's `format`: "json", or the schema itself. */
function formatOf(raw: unknown): unknown {
  const rf = asObject(raw);
  if (rf === undefined) return undefined;
  if (rf.type === 'json_object') return 'json';
  if (rf.type === 'json_schema') return asObject(rf.json_schema)?.schema;
  return undefined;
}

/** Call id -> function name, so a tool result can say which function it answers (`tool_name`). */
function callNames(messages: readonly NeutralMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) if (m.role === 'assistant') for (const c of m.tool_calls ?? []) names.set(c.id, c.name);
  return names;
}

export function encodeMessage(m: NeutralMessage, names: ReadonlyMap<string, string>, opts: EncodeOptions, thinking = true): OllamaMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return encodeUser(m, opts);
    case 'assistant':
      return encodeAssistant(m, thinking);
    case 'tool':
      return encodeTool(m, names);
  }
}

/** Text parts joined by newlines; images as base64 in `images`, in order. */
function encodeUser(m: UserMessage, opts: EncodeOptions): OllamaMessage {
  if (typeof m.content === 'string') return { role: 'user', content: m.content };
  const texts: string[] = [];
  const images: string[] = [];
  for (const part of m.content) {
    if (part.type === 'text') texts.push(part.text);
    else images.push(opts.resolveImage(part.sha256).base64);
  }
  const out: OllamaMessage = { role: 'user', content: texts.join('\n') };
  if (images.length > 0) out.images = images;
  return out;
}

/**
 * Content ("" when none), then the thinking (docs/decisions.md, Thinking goes back on its reply:
 * Ollama reads it as `thinking`; a route whose `reasoning` is "none" keeps it out, as a small local
 * context may want), then the calls with their arguments as objects. Blocks are not this wire's.
 */
function encodeAssistant(m: AssistantMessage, thinking: boolean): OllamaMessage {
  const out: OllamaMessage = { role: 'assistant', content: m.content ?? '' };
  if (thinking && m.thinking !== undefined && m.thinking.length > 0) out.thinking = m.thinking;
  const calls = m.tool_calls ?? [];
  if (calls.length > 0) {
    out.tool_calls = calls.map((c): OllamaToolCall => ({ id: c.id, function: { name: c.name, arguments: argumentsObject(c.arguments) } }));
  }
  return out;
}

function encodeTool(m: ToolMessage, names: ReadonlyMap<string, string>): OllamaMessage {
  const out: OllamaMessage = { role: 'tool', content: m.content };
  const name = names.get(m.tool_call_id);
  if (name !== undefined) out.tool_name = name;
  out.tool_call_id = m.tool_call_id;
  return out;
}

/**
 * Ollama takes arguments only as an object. The text is parsed, which keeps its key order, so the
 * bytes are the same each time. Text that is not a JSON object (a call made by another model and
 * carried over) goes as `{}`: Ollama would refuse the whole request otherwise.
 */
export function argumentsObject(text: string): Record<string, unknown> {
  const parsed = parseJson(text);
  const obj = parsed === undefined ? undefined : asObject(parsed.value);
  return obj ?? {};
}

