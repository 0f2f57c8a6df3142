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
import type { NeutralMessage, NeutralRequest, ToolSpec } from '../../core/types.js';
import type { EncodeOptions } from '../types.js';
import { MessageBlocks, systemBlocks, turnRole } from './conversation.js';
import { EMPTY, encodeList } from '../list-body.js';
import { stringifyWith, toolsJson } from '../tools-json.js';
import { loopLacksThinking, stopSequences, thinkingFor, toolChoiceFor } from './request-params.js';
import type { WireCacheControl, WireContentBlock, WireMarkableBlock, WireMessageParam, WireTextBlock, WireTool } from './wire-types.js';
import { joinHeaderList, jsonHeaders } from '../wire-headers.js';
import { addExtraFields } from '../extra-fields.js';

export const MESSAGES_PATH = '/messages';

/** Counts a request's input tokens without running it. */
export const COUNT_TOKENS_PATH = '/messages/count_tokens';

/** The API version every request names (the SDK's, unchanged since 2023). */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic's control of the prefix check on signed thinking blocks, and the beta it needs
 * (https://platform.claude.com/docs/build-with-claude/preserved-thinking/prefix-checks).
 */
export const THINKING_BINDING_BETA = 'thinking-binding-controls-2026-08-01';
const DROP_STALE_BLOCKS = { prefix_mismatch_behavior: 'drop_block' } as const;

/** Adds a beta to the request's `anthropic-beta` list (config may have set one already). */
function addBeta(headers: Record<string, string>, beta: string): void {
  const name = Object.keys(headers).find((h) => h.toLowerCase() === 'anthropic-beta') ?? 'anthropic-beta';
  headers[name] = joinHeaderList(headers[name] ?? '', beta);
}

/** `max_tokens` is required on this wire; the window always sets it, this is for other callers. */
export const DEFAULT_MAX_TOKENS = 4096;

export function encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest {
  const p = req.params;
  const maxTokens = p.max_tokens ?? DEFAULT_MAX_TOKENS;
  const turns = new MessageBlocks(req.messages, opts);
  const system = systemBlocks(req.messages, turns.leading);
  const asked = thinkingFor(p, route, maxTokens);
  // Inside a tool loop whose last reply lost its signed blocks, thinking would be a 400: off for this request.
  const ask = asked.thinking !== undefined && loopLacksThinking(turns) ? {} : asked;
  const thinkingOn = ask.thinking !== undefined && ask.thinking.type !== 'disabled';

  // The body in two parts, the fields before `messages` and those after, which go around the list.
  const before: Record<string, unknown> = { model: req.model, max_tokens: maxTokens };
  if (system.length > 0) before.system = system;
  // The neutral tools hold the place; their wire text is written from what was kept (tools-json.ts).
  if (req.tools.length > 0) before.tools = req.tools;
  const choice = toolChoiceFor(p, req.tools.length > 0, thinkingOn);
  if (choice !== undefined) before.tool_choice = choice;
  const after: Record<string, unknown> = {};
  // Signed blocks the window kept after an edit of their prefix: the API drops the invalid ones
  // rather than refusing the request. Asked on every request that thinks, so the thinking settings,
  // which key the message cache, stay the same across the session (docs/decisions/0009).
  const binding = thinkingOn && route.dropStaleThinking === true;
  if (ask.thinking !== undefined) after.thinking = binding ? { ...ask.thinking, block_binding: DROP_STALE_BLOCKS } : ask.thinking;
  if (ask.effort !== undefined) after.output_config = { effort: ask.effort };
  const stop = stopSequences(p.stop);
  if (stop !== undefined) after.stop_sequences = stop;
  // Thinking is incompatible with a set temperature (and with most top_p values): neither goes then.
  if (!thinkingOn && p.temperature !== undefined) after.temperature = p.temperature;
  if (!thinkingOn && p.top_p !== undefined) after.top_p = p.top_p;
  // The client's own fields (metadata, top_k, service_tier, ...); top_k not while thinking, which
  // refuses it as it refuses temperature (Anthropic, Extended thinking: "Thinking isn't compatible
  // with temperature or top_k modifications").
  addExtraFields(after, p, 'anthropic-messages', [...Object.keys(before), 'messages', ...(thinkingOn ? ['top_k'] : [])]);

  const forms: string[] = req.messages.map((_, i) => (i < turns.leading ? LEADING : ''));
  let breakpoints = 0;
  let toolsMarked: Ttl | undefined;
  if (hints.cacheControl !== undefined) {
    if (hints.cacheControlAt === 'breakpoints') ({ breakpoints, toolsMarked } = placeBreakpoints(req, turns, system, forms, hints.cacheControl));
    else after.cache_control = marker(hints.cacheControl);
  }
  if (opts.stream) after.stream = true;

  const head = req.tools.length > 0 ? stringifyWith(before, { tools: toolsText(req.tools, toolsMarked) }) : JSON.stringify(before);
  const tail = JSON.stringify(after);
  const body = encodeList(
    Buffer.from(`${head.slice(0, -1)},"messages":[`),
    { variant: VARIANT, items: req.messages, forms, serialise: (i) => serialise(turns, i, forms[i]!), lead: (i, prev) => lead(req.messages, i, prev), close },
    Buffer.from(tail === '{}' ? ']}' : '],' + tail.slice(1)),
    opts,
  );
  const encoded: EncodedRequest = { path: MESSAGES_PATH, headers: jsonHeaders(route, hints, { 'anthropic-version': ANTHROPIC_VERSION }), body };
  if (binding) addBeta(encoded.headers, THINKING_BINDING_BETA);
  if (breakpoints > 0) encoded.cacheBreakpoints = breakpoints;
  return encoded;
}

/**
 * A message's serialisation is its blocks, comma-joined; the turn around them is the lead and
 * close, so a message's bytes do not depend on the messages its turn merges it with. No route
 * option shapes them: blocks of another origin were left out by the window, which hands another
 * object then (window/entry.ts, withBlocks).
 */
const VARIANT = 'anthropic-messages';

/** Forms: a leading system message (in `system`, nothing in the list), a message whose last block holds the breakpoint. */
const LEADING = 'system';
const MARKED = 'marked:';
type Ttl = NonNullable<WireHints['cacheControl']>;

function marker(ttl: Ttl): WireCacheControl {
  return ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

function serialise(turns: MessageBlocks, i: number, form: string): Buffer {
  const blocks = turns.of(i);
  if (blocks.length === 0) return EMPTY;
  let out: WireContentBlock[] = blocks;
  if (form.startsWith(MARKED)) {
    const last = blocks[blocks.length - 1]!;
    out = [...blocks.slice(0, -1), { ...last, cache_control: marker(form.slice(MARKED.length) as Ttl) }];
  }
  const json = JSON.stringify(out);
  return Buffer.from(json.slice(1, -1));
}

const OPEN: Record<WireMessageParam['role'], Buffer> = {
  user: Buffer.from('{"role":"user","content":['),
  assistant: Buffer.from('{"role":"assistant","content":['),
};
const NEXT: Record<WireMessageParam['role'], Buffer> = {
  user: Buffer.from(']},{"role":"user","content":['),
  assistant: Buffer.from(']},{"role":"assistant","content":['),
};
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/** Consecutive messages of one role join one turn; another role closes it and opens the next. */
function lead(messages: readonly NeutralMessage[], i: number, prev: number | undefined): Buffer {
  const role = turnRole(messages[i]!);
  if (prev === undefined) return OPEN[role];
  return turnRole(messages[prev]!) === role ? COMMA : NEXT[role];
}

function close(prev: number | undefined): Buffer {
  return prev === undefined ? EMPTY : CLOSE;
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
 * so all four places are ours): the system prompt's and the tools' last blocks here, the history's
 * through its message's form; returns how many were marked. A history message that produced no
 * block (left out as empty) hands its marker to the nearest earlier message that did.
 */
function placeBreakpoints(req: NeutralRequest, turns: MessageBlocks, system: WireTextBlock[], forms: string[], ttl: Ttl): { breakpoints: number; toolsMarked: Ttl | undefined } {
  const plan = planBreakpoints(req, 0);
  let marked = 0;
  if (plan.history !== undefined) {
    for (let i = plan.history; i >= turns.leading; i--) {
      const block = turns.of(i).at(-1);
      if (block !== undefined && isMarkable(block)) {
        forms[i] = MARKED + ttl;
        marked++;
        break;
      }
    }
  }
  if (plan.first !== undefined && plan.first >= turns.leading) {
    const block = turns.of(plan.first).at(-1);
    if (block !== undefined && isMarkable(block) && forms[plan.first] === '') {
      forms[plan.first] = MARKED + ttl;
      marked++;
    }
  }
  const systemEnd = system.at(-1);
  if (plan.system && systemEnd !== undefined) {
    systemEnd.cache_control = marker(ttl);
    marked++;
  }
  // The last tool's marker is written with the tools' text (toolsText).
  const toolsMarked = plan.tools && req.tools.length > 0 ? ttl : undefined;
  return { breakpoints: marked + (toolsMarked === undefined ? 0 : 1), toolsMarked };
}

/** The wire's tools, the last one marked with `ttl` when a breakpoint is placed there. */
function toolsText(tools: readonly ToolSpec[], ttl: Ttl | undefined): string {
  return toolsJson(tools, `anthropic-messages\u0000${ttl ?? ''}`, (ts) => {
    const out = ts.map(encodeTool);
    if (ttl !== undefined) out[out.length - 1] = { ...out[out.length - 1]!, cache_control: marker(ttl) };
    return out;
  });
}

/** Thinking blocks cannot carry `cache_control`. */
function isMarkable(block: WireContentBlock): block is WireContentBlock & WireMarkableBlock {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

