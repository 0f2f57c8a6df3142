/**
 * NeutralRequest -> a Messages request. Every wire object is built in a fixed key order and
 * serialised with JSON.stringify, so equal requests give equal bytes. A tool's schema goes as the
 * client first sent it (the frozen catalog), key order included.
 *
 * Cache hints: `top-level` sends the request's own `cache_control` (the API puts the marker on the
 * last cacheable block and moves it as the conversation grows); `breakpoints` puts `cache_control`
 * on the blocks `planBreakpoints` names: the end of the stable history, of the system prompt and of
 * the tools (docs/decisions.md, Anthropic caches only when asked), at most four.
 */
import { planBreakpoints } from '../../cache-hints/breakpoints.js';
import type { DialectRoute, EncodedRequest, WireHints } from '../../core/route.js';
import type { NeutralRequest, ToolSpec } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { encodeConversation, type Conversation } from './conversation.js';
import { loopLacksThinking, stopSequences, thinkingFor, toolChoiceFor } from './request-params.js';
import type { WireCacheControl, WireContentBlock, WireMarkableBlock, WireTool } from './wire-types.js';
import { jsonHeaders } from '../wire-headers.js';
import { addExtraFields } from '../extra-fields.js';

export const MESSAGES_PATH = '/messages';

/** Counts a request's input tokens without running it. */
export const COUNT_TOKENS_PATH = '/messages/count_tokens';

/** The API version every request names (the SDK's, unchanged since 2023). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** `max_tokens` is required on this wire; the window always sets it, this is for other callers. */
export const DEFAULT_MAX_TOKENS = 4096;

export function encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest {
  const p = req.params;
  const maxTokens = p.max_tokens ?? DEFAULT_MAX_TOKENS;
  const conv = encodeConversation(req.messages, opts);
  const tools = req.tools.map(encodeTool);
  const asked = thinkingFor(p, route, maxTokens);
  // Inside a tool loop whose last reply lost its signed blocks, thinking would be a 400: off for this request.
  const ask = asked.thinking !== undefined && loopLacksThinking(conv.messages) ? {} : asked;
  const thinkingOn = ask.thinking !== undefined && ask.thinking.type !== 'disabled';

  const body: Record<string, unknown> = { model: req.model, max_tokens: maxTokens };
  if (conv.system.length > 0) body.system = conv.system;
  if (tools.length > 0) body.tools = tools;
  const choice = toolChoiceFor(p, tools.length > 0, thinkingOn);
  if (choice !== undefined) body.tool_choice = choice;
  body.messages = conv.messages;
  if (ask.thinking !== undefined) body.thinking = ask.thinking;
  if (ask.effort !== undefined) body.output_config = { effort: ask.effort };
  const stop = stopSequences(p.stop);
  if (stop !== undefined) body.stop_sequences = stop;
  // Thinking is incompatible with a set temperature (and with most top_p values): neither goes then.
  if (!thinkingOn && p.temperature !== undefined) body.temperature = p.temperature;
  if (!thinkingOn && p.top_p !== undefined) body.top_p = p.top_p;
  // The client's own fields (metadata, top_k, service_tier, ...); top_k not while thinking, which
  // refuses it as it refuses temperature (Anthropic, Extended thinking: "Thinking isn't compatible
  // with temperature or top_k modifications").
  addExtraFields(body, p, 'anthropic-messages', thinkingOn ? ['top_k'] : []);

  let breakpoints = 0;
  if (hints.cacheControl !== undefined) {
    const marker = (): WireCacheControl => (hints.cacheControl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' });
    if (hints.cacheControlAt === 'breakpoints') breakpoints = placeBreakpoints(req, conv, tools, marker);
    else body.cache_control = marker();
  }
  if (opts.stream) body.stream = true;

  const encoded: EncodedRequest = { path: MESSAGES_PATH, headers: jsonHeaders(route, hints, { 'anthropic-version': ANTHROPIC_VERSION }), body: JSON.stringify(body) };
  if (breakpoints > 0) encoded.cacheBreakpoints = breakpoints;
  return encoded;
}

/**
 * `POST /messages/count_tokens` for a client of this wire: its body as it came, naming the
 * upstream's model (the log and the window are not involved: nothing is answered).
 */
export function encodeCountTokens(clientBody: Record<string, unknown>, route: DialectRoute): EncodedRequest {
  const body = JSON.stringify({ ...clientBody, model: route.model });
  return { path: COUNT_TOKENS_PATH, headers: jsonHeaders(route, { bodyKey: false, headers: {} }, { 'anthropic-version': ANTHROPIC_VERSION }), body };
}

/** OpenAI's function tool -> `{name, description, input_schema}` (the API requires an object schema). */
export function encodeTool(tool: ToolSpec): WireTool {
  const fn = tool.function;
  const schema = fn.parameters ?? { type: 'object', properties: {} };
  const out: WireTool = fn.description === undefined ? { name: fn.name, input_schema: schema } : { name: fn.name, description: fn.description, input_schema: schema };
  if (fn.strict !== undefined) out.strict = fn.strict;
  return out;
}

/**
 * Marks the blocks `planBreakpoints` names (the neutral request carries no markers of the client's,
 * so all four places are ours); returns how many were marked. A history message that produced no
 * block (left out as empty) hands its marker to the nearest earlier message that did.
 */
function placeBreakpoints(req: NeutralRequest, conv: Conversation, tools: WireTool[], marker: () => WireCacheControl): number {
  const plan = planBreakpoints(req, 0);
  const marked: WireMarkableBlock[] = [];
  if (plan.history !== undefined) {
    for (let i = plan.history; i >= 0; i--) {
      const block = conv.lastBlock[i];
      if (block !== undefined && isMarkable(block)) {
        marked.push(block);
        break;
      }
    }
  }
  const systemEnd = conv.system[conv.system.length - 1];
  if (plan.system && systemEnd !== undefined) marked.push(systemEnd);
  const toolsEnd = tools[tools.length - 1];
  if (plan.tools && toolsEnd !== undefined) marked.push(toolsEnd);
  for (const block of marked) block.cache_control = marker();
  return marked.length;
}

/** Thinking blocks cannot carry `cache_control`. */
function isMarkable(block: WireContentBlock): block is WireContentBlock & WireMarkableBlock {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

