/**
 * A Gemini API request -> the neutral request every upstream wire is built from (docs/inbound.md,
 * Gemini API).
 *
 * - `systemInstruction` (its text parts joined by a blank line) is the session's system prompt.
 * - A user text part that is Gemini CLI's `<session_context>` block (the date, the OS, the
 *   workspace's paths) is a system message where it stands: context the client sets up, not what a
 *   person asked, so `[window] volatile_lines` applies to it (its date line is in the default).
 * - `user` contents: `functionResponse` parts become tool messages, in order, before the content's
 *   text and images (`inlineData`, stored as a data URL). A response `{output: "text"}` (Gemini
 *   CLI's) is its text; any other response is its JSON.
 * - `model` contents: text and `functionCall` parts (`args` serialised as the arguments). Thought
 *   parts and thought signatures the client echoes are ignored, as every inbound wire ignores echoed
 *   reasoning: the log's copy goes upstream, to the origin that made it.
 * - A call without an `id` is named `<name>_<content>_<part>`; a response without one answers the
 *   first unanswered call of its name in the model content before it.
 */
import type { AssistantMessage, ContentPart, NeutralMessage, RequestParams, ToolCall, ToolSpec } from '../../core/types.js';
import type { ImageSink } from '../types.js';
import { READ_FIELDS, READ_GENERATION, type ClientContent, type ClientTool, type ParsedGemini } from './inbound-parse.js';

export interface Conversation {
  system: string | undefined;
  messages: NeutralMessage[];
}

/** Gemini CLI's context block, which opens its first user content. */
export const SESSION_CONTEXT = '<session_context>';

export function toConversation(parsed: ParsedGemini, images: ImageSink): Conversation {
  const si = parsed.body.systemInstruction;
  const system = si === undefined ? undefined : typeof si === 'string' ? si : si.parts.map((p) => p.text ?? '').join('\n\n');
  const messages: NeutralMessage[] = [];
  let lastCalls: ToolCall[] = [];
  parsed.contents.forEach((c, i) => {
    if (c.role === 'model') {
      const msg = modelMessage(c, i);
      lastCalls = msg.tool_calls ?? [];
      messages.push(msg);
    } else {
      messages.push(...userMessages(c, i, lastCalls, images));
      lastCalls = [];
    }
  });
  return { system, messages };
}

function modelMessage(c: ClientContent, index: number): AssistantMessage {
  let text = '';
  const calls: ToolCall[] = [];
  c.parts.forEach((p, j) => {
    if (p.functionCall !== undefined) {
      const call = p.functionCall;
      calls.push({ id: call.id ?? `${call.name}_${index}_${j}`, name: call.name, arguments: JSON.stringify(call.args ?? {}) });
    } else if (p.text !== undefined && p.thought !== true) text += p.text;
  });
  const out: AssistantMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

function userMessages(c: ClientContent, index: number, calls: readonly ToolCall[], images: ImageSink): NeutralMessage[] {
  const out: NeutralMessage[] = [];
  const parts: ContentPart[] = [];
  const answered = new Set<string>();
  const flush = (): void => {
    if (parts.length === 1 && parts[0]!.type === 'text') out.push({ role: 'user', content: parts[0]!.text });
    else if (parts.length > 0) out.push({ role: 'user', content: [...parts] });
    parts.length = 0;
  };
  c.parts.forEach((p, j) => {
    const param = `contents[${index}].parts[${j}]`;
    if (p.functionResponse !== undefined) {
      const r = p.functionResponse;
      const id = r.id ?? calls.find((call) => call.name === r.name && !answered.has(call.id))?.id ?? `${r.name}_${index}_${j}`;
      answered.add(id);
      out.push({ role: 'tool', tool_call_id: id, content: responseText(r.response ?? {}) });
    } else if (p.inlineData !== undefined) {
      parts.push(images(`data:${p.inlineData.mimeType};base64,${p.inlineData.data}`, undefined, `${param}.inlineData`));
    } else if (p.text !== undefined && p.thought !== true) {
      if (p.text.trimStart().startsWith(SESSION_CONTEXT)) {
        flush();
        out.push({ role: 'system', content: p.text });
      } else parts.push({ type: 'text', text: p.text });
    }
  });
  flush();
  return out;
}

/** Gemini CLI's `{output: "..."}` is its text (so the window's line caps read it); anything else, its JSON. */
export function responseText(response: Record<string, unknown>): string {
  const keys = Object.keys(response);
  if (keys.length === 1 && keys[0] === 'output' && typeof response.output === 'string') return response.output;
  return JSON.stringify(response);
}

/** Function declarations in the neutral form; the JSON Schema form (`parametersJsonSchema`) first. */
export function toTools(tools: readonly ClientTool[] | undefined): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const t of tools ?? []) {
    for (const d of t.functionDeclarations ?? []) {
      const fn: ToolSpec['function'] = { name: d.name };
      if (d.description !== undefined) fn.description = d.description;
      fn.parameters = d.parametersJsonSchema ?? lowerTypes(d.parameters) ?? { type: 'object', properties: {} };
      out.push({ type: 'function', function: fn });
    }
  }
  return out;
}

/** Gemini's OpenAPI subset writes types in capitals (`OBJECT`, `STRING`); JSON Schema's are lower case. */
function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'type' && typeof v === 'string' ? v.toLowerCase() : lowerTypes(v);
  return out;
}

/**
 * A thinking budget in the neutral efforts (the largest whose budget fits in it): the same table the
 * encoder writes budgets from, so a budget comes back as itself where it is one of these.
 */
export const EFFORT_BUDGET: Readonly<Record<string, number>> = { minimal: 512, low: 1024, medium: 8192, high: 24576 };

function effortOf(budget: number | undefined, level: string | undefined): string | undefined {
  if (level !== undefined && level !== 'THINKING_LEVEL_UNSPECIFIED') return level.toLowerCase();
  if (budget === undefined || budget === -1) return undefined;
  if (budget === 0) return 'none';
  let best = 'minimal';
  for (const [name, b] of Object.entries(EFFORT_BUDGET)) if (b <= budget && b >= EFFORT_BUDGET[best]!) best = name;
  return best;
}

function toolChoice(body: ParsedGemini['body']): unknown {
  const cfg = body.toolConfig?.functionCallingConfig;
  if (cfg?.mode === 'NONE') return 'none';
  if (cfg?.mode === 'ANY' || cfg?.mode === 'VALIDATED') {
    const names = cfg.allowedFunctionNames ?? [];
    return names.length === 1 ? { type: 'function', function: { name: names[0] } } : 'required';
  }
  return cfg?.mode === 'AUTO' ? 'auto' : undefined;
}

/** The per-request parameters the window passes through (and the log records). */
export function toParams(body: ParsedGemini['body']): RequestParams {
  const p: RequestParams = {};
  const g = body.generationConfig ?? {};
  if (g.maxOutputTokens !== undefined) p.max_tokens = g.maxOutputTokens;
  if (g.temperature !== undefined) p.temperature = g.temperature;
  if (g.topP !== undefined) p.top_p = g.topP;
  if (g.stopSequences !== undefined && g.stopSequences.length > 0) p.stop = g.stopSequences;
  if (g.seed !== undefined) p.seed = g.seed;
  if (g.presencePenalty !== undefined) p.presence_penalty = g.presencePenalty;
  if (g.frequencyPenalty !== undefined) p.frequency_penalty = g.frequencyPenalty;
  const schema = g.responseJsonSchema ?? g.responseSchema;
  if (schema !== undefined) p.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: g.responseJsonSchema ?? lowerTypes(schema) } };
  else if (g.responseMimeType === 'application/json') p.response_format = { type: 'json_object' };
  const choice = toolChoice(body);
  if (choice !== undefined) p.tool_choice = choice;
  const t = g.thinkingConfig;
  const effort = effortOf(t?.thinkingBudget, t?.thinkingLevel);
  if (effort !== undefined) p.reasoning_effort = effort;
  // Thought summaries asked for: Responses' summaries are the same thing; a Gemini upstream reads it back as includeThoughts.
  if (t?.includeThoughts === true) p.reasoning_summary = 'auto';
  const extra = extraOf(body as Record<string, unknown>, g as Record<string, unknown>);
  if (extra !== undefined) p.extra = extra;
  return p;
}

/** Top-level fields the proxy does not read, and the `generationConfig` members it does not read (as `generationConfig`), sorted. */
function extraOf(body: Record<string, unknown>, g: Record<string, unknown>): RequestParams['extra'] {
  const fields: Record<string, unknown> = {};
  for (const k of Object.keys(body).sort()) if (!READ_FIELDS.has(k) && body[k] !== undefined) fields[k] = body[k];
  const rest = Object.keys(g).filter((k) => !READ_GENERATION.has(k) && g[k] !== undefined).sort();
  if (rest.length > 0) fields.generationConfig = Object.fromEntries(rest.map((k) => [k, g[k]]));
  const names = Object.keys(fields).sort();
  if (names.length === 0) return undefined;
  return { wire: 'gemini', fields: Object.fromEntries(names.map((k) => [k, fields[k]])) };
}
