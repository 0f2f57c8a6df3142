/**
 * What the simulated model answers: a plan built from the directives of the last message and the
 * prompt's digest, so the same request always gets the same reply (ids included).
 */
import { sha256Hex } from './hash.js';
import { parseDirectives, type Directive } from './directives.js';
import type { ModeSpec } from './modes.js';
import { contentText, type WireMessage } from './request.js';
import { countTokens } from './tokens.js';

export interface ToolCallOut {
  id: string;
  name: string;
  arguments: string;
  /** Gemini: `extra_content.google.thought_signature` on this call. */
  thoughtSignature?: string;
}

/** OpenRouter's `reasoning_details`: the whole array, and the fragments each stream delta carries. */
export interface DetailsOut {
  items: Record<string, unknown>[];
  deltas: Record<string, unknown>[][];
}

/** How the request asked the reply to fail, if it did. */
export type PlannedFailure = { kind: 'error'; status: number } | { kind: 'overflow' };

/** Faults of the transport (directives.ts), acted out by the chat wire's server. */
export interface TransportFaults {
  reset: boolean;
  resetMid: boolean;
  malformedSse: boolean;
  noFinish: boolean;
  oversized: boolean;
  /** Headers an error carries (`retry-after`, `retry-after-ms`). */
  errorHeaders: Record<string, string>;
}

export const NO_FAULTS: TransportFaults = { reset: false, resetMid: false, malformedSse: false, noFinish: false, oversized: false, errorHeaders: {} };

export interface ReplyPlan {
  content: string | null;
  thinking: string | null;
  toolCalls: ToolCallOut[];
  finishReason: 'stop' | 'tool_calls';
  completionTokens: number;
  reasoningTokens: number;
  slowMs: number;
  streamError: boolean;
  failure: PlannedFailure | null;
  /** Set by a mode's rules (openrouter.ts); null otherwise. */
  details: DetailsOut | null;
  faults: TransportFaults;
  /** `[[fail-times N]]`: the failures are planned for the first N identical requests only. */
  failTimes: number | null;
}

/** The plan of a request past its `[[fail-times N]]`: the same reply, with no failure of any kind. */
export function withoutFailures(plan: ReplyPlan): ReplyPlan {
  return { ...plan, streamError: false, failure: null, faults: NO_FAULTS };
}

/** Four-byte filler words, so N words are exactly N tokens. */
const FILLER = ['lor ', 'ips ', 'dol ', 'sit ', 'amt ', 'con ', 'adi ', 'eli '];

/**
 * `opts.tools: false`: the request declared no tools, or set `tool_choice: "none"`, so `[[call]]`
 * is not acted on: a model can call only a function it was given, and none when told not to (a
 * client's summary or title prompt that quotes a transcript holding a directive gets text, as it
 * would from the API).
 */
export function planReply(messages: readonly WireMessage[], digest: string, mode: ModeSpec, opts: { tools: boolean } = { tools: true }): ReplyPlan {
  const directives = parseDirectives(lastTurnText(messages));
  const of = <K extends Directive['kind']>(kind: K) =>
    directives.filter((d): d is Extract<Directive, { kind: K }> => d.kind === kind);

  const toolCalls = (opts.tools ? of('call') : []).map((call, i) => ({
    id: `call_${sha256Hex(`${digest}:${i}`).slice(0, 24)}`,
    name: call.name,
    arguments: call.args,
  }));
  const said = of('say').map((d) => d.text);
  const len = of('len').at(-1)?.tokens;
  let content: string | null = said.length > 0 ? said.join('\n') : null;
  if (len !== undefined) content = (content ?? '') + filler(len, digest);
  if (content === null && toolCalls.length === 0) content = `OK. This is the simulator's reply ${digest.slice(0, 12)}.`;

  const thoughts = of('think').map((d) => d.text);
  const thinking = thoughts.length > 0 ? thoughts.join('\n')
    : mode.alwaysThinks ? `The user wants an answer; prompt ${digest.slice(0, 16)} considered.` : null;

  const reasoningTokens = thinking === null ? 0 : countTokens(thinking);
  let completionTokens = reasoningTokens + (content === null ? 0 : countTokens(content));
  for (const call of toolCalls) completionTokens += countTokens(call.name) + countTokens(call.arguments);

  const failure = directives.find((d): d is Extract<Directive, { kind: 'error' | 'overflow' }> => d.kind === 'error' || d.kind === 'overflow');
  return {
    content,
    thinking,
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
    completionTokens,
    reasoningTokens,
    slowMs: of('slow').at(-1)?.ms ?? 0,
    streamError: of('stream-error').length > 0,
    failure: failure === undefined ? null : failure.kind === 'error' ? { kind: 'error', status: failure.status } : { kind: 'overflow' },
    details: null,
    faults: {
      reset: of('reset').length > 0,
      resetMid: of('reset-mid').length > 0,
      malformedSse: of('malformed-sse').length > 0,
      noFinish: of('no-finish').length > 0,
      oversized: of('oversized').length > 0,
      errorHeaders: {
        ...numberHeader('retry-after', of('retry-after').at(-1)?.n),
        ...numberHeader('retry-after-ms', of('retry-after-ms').at(-1)?.n),
      },
    },
    failTimes: of('fail-times').at(-1)?.n ?? null,
  };
}

function numberHeader(name: string, value: number | undefined): Record<string, string> {
  return value === undefined ? {} : { [name]: String(value) };
}

/**
 * The text the directives are read from: the last message that is not a system message (an agent
 * may put one after the user's, as Claude Code does with its environment), and when that is a user
 * message, the tool results right before it (one Anthropic user turn: results, then text).
 */
function lastTurnText(messages: readonly WireMessage[]): string {
  let end = messages.length;
  while (end > 1 && messages[end - 1]!.role === 'system') end--;
  let from = end - 1;
  if (messages[from]?.role === 'user') while (from > 0 && messages[from - 1]!.role === 'tool') from--;
  return messages.slice(Math.max(from, 0), end).map((m) => contentText(m.content)).join('\n');
}

function filler(tokens: number, digest: string): string {
  const start = Number.parseInt(digest.slice(0, 2), 16);
  let out = '';
  for (let i = 0; i < tokens; i++) out += FILLER[(start + i) % FILLER.length];
  return out;
}
