/**
 * NeutralRequest -> a Gemini API request (`POST /models/{model}:generateContent`, or
 * `:streamGenerateContent?alt=sse`). Every wire object is built in a fixed key order and serialised
 * with JSON.stringify, so equal requests give equal bytes and Gemini's implicit cache, which reads
 * the prefix, keeps hitting while the window holds it.
 *
 * - The first message, when a system message, is `systemInstruction`; system messages later in the
 *   conversation are user text (Gemini has no system turn), as Gemini CLI itself sends its context.
 * - Consecutive user and tool messages are one `user` content (a batch's `functionResponse` parts
 *   together, as the API asks), consecutive assistant messages one `model` content.
 * - A tool result goes as `{output: text}` unless its text is a JSON object, which goes as itself
 *   (what a Gemini client sent as a response object); its `name` is its call's.
 * - Thought signatures go back on the parts that carried them (model-parts.ts); thinking text is not
 *   sent back (Gemini reads signatures, not summaries). To Gemini 3 and later, a step whose first
 *   call has none (another model made it: a tool loop that moved here from another route, a history
 *   a client brought) gets Google's stand-in, on every turn so the bytes stay as they were sent
 *   (docs/decisions/0031-a-stand-in-for-signatures-gemini-never-made.md).
 * - `reasoning_effort` is `thinkingLevel` (Gemini 3 and later) or a `thinkingBudget` (Gemini 2.x,
 *   0 for `none`); `reasoning_summary` asks for thoughts (`includeThoughts`).
 */
import type { DialectRoute, EncodedRequest, WireHints } from '../../core/route.js';
import type { NeutralMessage, NeutralRequest, RequestParams, ToolSpec } from '../../core/types.js';
import { addExtraFields } from '../extra-fields.js';
import type { EncodeOptions } from '../types.js';
import { jsonHeaders } from '../wire-headers.js';
import { EFFORT_BUDGET } from './inbound-convert.js';
import { argsOf, modelParts } from './model-parts.js';
import { requiresCallSignatures, STAND_IN_SIGNATURE } from '../../core/gemini-family.js';
import type { WireContent, WireGenerationConfig, WirePart, WireThinkingConfig, WireTool, WireToolConfig } from './wire-types.js';

export function generatePath(model: string, stream: boolean): string {
  return stream ? `/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse` : `/models/${encodeURIComponent(model)}:generateContent`;
}

export function encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest {
  const prompt = promptOf(req, opts);
  const cache = hints.geminiCache;
  const body: Record<string, unknown> = {};
  if (cache === undefined) {
    body.contents = prompt.contents;
    if (prompt.systemInstruction !== undefined) body.systemInstruction = prompt.systemInstruction;
    if (prompt.tools !== undefined) body.tools = prompt.tools;
    if (prompt.toolConfig !== undefined) body.toolConfig = prompt.toolConfig;
  } else {
    // The API refuses systemInstruction, tools and toolConfig beside a cache: they are in it.
    body.contents = prompt.contents.slice(prompt.ends[cache.messages - 1] ?? 0);
    body.cachedContent = cache.name;
  }
  const generation = generationOf(req.params, req.model);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  addExtraFields(body, req.params, 'gemini');
  return { path: generatePath(req.model, opts.stream), headers: jsonHeaders(route, hints), body: JSON.stringify(body) };
}

/** A request's prompt on the wire, and how many contents stand after each of its messages. */
export interface WirePrompt {
  systemInstruction?: { parts: WirePart[] };
  tools?: WireTool[];
  toolConfig?: WireToolConfig;
  contents: WireContent[];
  /** `ends[i]`: the number of contents begun by messages 0..i; whole only at a cut (cached-content.ts). */
  ends: number[];
}

export function promptOf(req: NeutralRequest, opts: Pick<EncodeOptions, 'resolveImage'>): WirePrompt {
  const first = req.messages[0];
  const lead = first?.role === 'system' ? first : undefined;
  const rest = lead === undefined ? req.messages : req.messages.slice(1);
  const { contents, ends } = contentsOf(rest, opts);
  if (requiresCallSignatures(req.model)) standInSignatures(contents);
  const prompt: WirePrompt = { contents, ends: lead === undefined ? ends : [0, ...ends] };
  if (lead !== undefined && lead.content !== '') prompt.systemInstruction = { parts: [{ text: lead.content }] };
  if (req.tools.length > 0) prompt.tools = toolsOf(req.tools);
  const toolConfig = toolConfigOf(req.params.tool_choice);
  if (toolConfig !== undefined && req.tools.length > 0) prompt.toolConfig = toolConfig;
  return prompt;
}

function contentsOf(messages: readonly NeutralMessage[], opts: Pick<EncodeOptions, 'resolveImage'>): { contents: WireContent[]; ends: number[] } {
  const out: WireContent[] = [];
  const ends: number[] = [];
  const names = new Map<string, string>();
  const add = (role: WireContent['role'], parts: WirePart[]): void => {
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        if (m.content !== '') add('user', [{ text: m.content }]);
        break;
      case 'user':
        add('user', typeof m.content === 'string' ? [{ text: m.content }] : m.content.map((p): WirePart => {
          if (p.type === 'text') return { text: p.text };
          const image = opts.resolveImage(p.sha256);
          return { inlineData: { mimeType: image.mime, data: image.base64 } };
        }));
        break;
      case 'tool':
        add('user', [{ functionResponse: { id: m.tool_call_id, name: names.get(m.tool_call_id) ?? '', response: responseOf(m.content) } }]);
        break;
      case 'assistant': {
        for (const c of m.tool_calls ?? []) names.set(c.id, c.name);
        const parts = modelParts(m, { thoughts: false });
        // A turn with nothing to show (an elided reply of nothing) still holds its place.
        add('model', parts.length > 0 ? parts : [{ text: '' }]);
        break;
      }
    }
    ends.push(out.length);
  }
  return { contents: out, ends };
}

/** The first call of each model content without a signature gets the stand-in, in the call's own key order. */
function standInSignatures(contents: WireContent[]): void {
  for (const content of contents) {
    if (content.role !== 'model') continue;
    const first = content.parts.find((p) => p.functionCall !== undefined);
    if (first !== undefined && first.thoughtSignature === undefined) first.thoughtSignature = STAND_IN_SIGNATURE;
  }
}

function responseOf(text: string): Record<string, unknown> {
  if (text.startsWith('{')) {
    const value = argsOf(text);
    if (!Object.hasOwn(value, 'arguments') || Object.keys(value).length > 1) return value;
  }
  return { output: text };
}

function toolsOf(tools: readonly ToolSpec[]): WireTool[] {
  return [{
    functionDeclarations: tools.map((t) => {
      const d: WireTool['functionDeclarations'][number] = { name: t.function.name };
      if (t.function.description !== undefined) d.description = t.function.description;
      if (t.function.parameters !== undefined) d.parametersJsonSchema = t.function.parameters;
      return d;
    }),
  }];
}

function toolConfigOf(choice: unknown): WireToolConfig | undefined {
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  const name = (choice as { function?: { name?: unknown } } | undefined)?.function?.name;
  return typeof name === 'string' ? { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } } : undefined;
}

/** Gemini 2.x takes a token budget; later models a level. */
function thinkingOf(p: RequestParams, model: string): WireThinkingConfig | undefined {
  const out: WireThinkingConfig = {};
  if (p.reasoning_summary !== undefined && p.reasoning_effort !== 'none') out.includeThoughts = true;
  const effort = p.reasoning_effort;
  if (effort !== undefined) {
    const budgets = /^gemini-(1|2)[.-]/.test(model);
    if (effort === 'none') out.thinkingBudget = 0;
    else if (budgets) out.thinkingBudget = EFFORT_BUDGET[effort] ?? EFFORT_BUDGET.high!;
    else out.thinkingLevel = effort === 'minimal' ? 'MINIMAL' : effort === 'low' ? 'LOW' : effort === 'medium' ? 'MEDIUM' : 'HIGH';
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function generationOf(p: RequestParams, model: string): WireGenerationConfig & Record<string, unknown> {
  const g: WireGenerationConfig & Record<string, unknown> = {};
  if (p.temperature !== undefined) g.temperature = p.temperature;
  if (p.top_p !== undefined) g.topP = p.top_p;
  if (p.max_tokens !== undefined) g.maxOutputTokens = p.max_tokens;
  if (p.stop !== undefined) g.stopSequences = typeof p.stop === 'string' ? [p.stop] : p.stop;
  if (p.seed !== undefined) g.seed = p.seed;
  if (p.presence_penalty !== undefined) g.presencePenalty = p.presence_penalty;
  if (p.frequency_penalty !== undefined) g.frequencyPenalty = p.frequency_penalty;
  const format = p.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === 'json_object' || format?.type === 'json_schema') g.responseMimeType = 'application/json';
  if (format?.type === 'json_schema' && format.json_schema?.schema !== undefined) g.responseJsonSchema = format.json_schema.schema;
  const thinking = thinkingOf(p, model);
  if (thinking !== undefined) g.thinkingConfig = thinking;
  // The client's own generation fields (topK, candidateCount, ...), from a Gemini client only.
  const extra = p.extra?.wire === 'gemini' ? (p.extra.fields.generationConfig as Record<string, unknown> | undefined) : undefined;
  for (const [k, v] of Object.entries(extra ?? {})) if (!Object.hasOwn(g, k)) g[k] = v;
  return g;
}

/** A Gemini client's count, for this upstream's model: `generateContentRequest` names it. */
export function encodeCountTokens(clientBody: Record<string, unknown>, route: DialectRoute): EncodedRequest {
  const inner = (clientBody.generateContentRequest ?? clientBody) as Record<string, unknown>;
  const onlyContents = clientBody.generateContentRequest === undefined && Object.keys(clientBody).every((k) => k === 'contents');
  const body = onlyContents ? { contents: inner.contents } : { generateContentRequest: { ...inner, model: `models/${route.model}` } };
  return { path: `/models/${encodeURIComponent(route.model)}:countTokens`, headers: jsonHeaders(route, { bodyKey: false, headers: {} }), body: JSON.stringify(body) };
}
