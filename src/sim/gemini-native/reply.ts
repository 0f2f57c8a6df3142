/**
 * A reply plan as Gemini's wire (ai.google.dev/api/generate-content): the candidate's parts
 * (thought summary first when `includeThoughts`, then the answer text, then one part per call;
 * the thought signature on the first call, else on the first answer part), `usageMetadata` with
 * Google's names (a zero count is left out, as proto3 JSON leaves it), and the stream's chunks:
 * each a whole GenerateContentResponse holding the next parts and the usage so far, the last one
 * with `finishReason` and the full usage.
 */
import type { ReplyPlan } from '../replies.js';
import { countTokens } from '../tokens.js';
import type { GoogleError } from './errors.js';
import type { Json, Part } from './request.js';
import { bindingOf, seal } from './signatures.js';

const TEXT_PIECE = 24;

export interface GeminiUsage {
  prompt: number;
  cached: number;
  candidates: number;
  thoughts: number;
}

export interface ReplyMeta {
  responseId: string;
  modelVersion: string;
}

/** `thinking`: the thinking this reply did (null when off); `include`: summaries shown as parts. */
export function replyParts(plan: ReplyPlan, thinking: string | null, include: boolean): Part[] {
  const parts: Part[] = [];
  if (thinking !== null && include) parts.push({ text: thinking, thought: true });
  if (plan.content !== null) parts.push({ text: plan.content });
  for (const call of plan.toolCalls) parts.push({ functionCall: { name: call.name, args: argsObject(call.arguments) } });
  if (thinking === null) return parts;
  const signed = parts.find((p) => p.functionCall !== undefined) ?? parts.find((p) => p.thought !== true);
  if (signed !== undefined) signed.thoughtSignature = seal({ binding: bindingOf(signed, 0), thinking });
  return parts;
}

export function usageMetadata(u: GeminiUsage): Json {
  const out: Json = { promptTokenCount: u.prompt };
  if (u.cached > 0) out.cachedContentTokenCount = u.cached;
  if (u.candidates > 0) out.candidatesTokenCount = u.candidates;
  if (u.thoughts > 0) out.thoughtsTokenCount = u.thoughts;
  out.totalTokenCount = u.prompt + u.candidates + u.thoughts;
  out.promptTokensDetails = [{ modality: 'TEXT', tokenCount: u.prompt }];
  if (u.cached > 0) out.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: u.cached }];
  return out;
}

export function responseBody(meta: ReplyMeta, parts: readonly Part[], finishReason: string | null, usage: Json): Json {
  const candidate: Json = { content: { role: 'model', parts: parts.map(wirePart) }, index: 0 };
  if (finishReason !== null) candidate.finishReason = finishReason;
  return { candidates: [candidate], usageMetadata: usage, modelVersion: meta.modelVersion, responseId: meta.responseId };
}

/**
 * The stream's chunks: the thought summary, the answer text in pieces (the signature on the
 * first), then each call whole (the API does not split a call's arguments). With `failure`, an
 * error object after half the text, and nothing after it.
 */
export function streamChunks(meta: ReplyMeta, parts: readonly Part[], finishReason: string, u: GeminiUsage, failure: GoogleError | null): Json[] {
  const pieces: Part[] = [];
  for (const part of parts) {
    if (part.text === undefined) {
      pieces.push(part);
      continue;
    }
    split(part.text, TEXT_PIECE).forEach((text, i) => pieces.push({ ...part, text, ...(i === 0 ? {} : { thoughtSignature: undefined }) }));
  }
  const out: Json[] = [];
  let candidates = 0;
  for (const [i, piece] of pieces.entries()) {
    if (failure !== null && i >= Math.max(1, Math.ceil(pieces.length / 2))) {
      out.push(failure.body());
      return out;
    }
    // The thinking is done before the first chunk; the answer's count grows chunk by chunk.
    if (piece.thought !== true) candidates += piece.text !== undefined ? countTokens(piece.text) : 0;
    const last = i === pieces.length - 1;
    const sofar = last ? u : { ...u, candidates: Math.min(candidates, u.candidates) };
    out.push(responseBody(meta, [piece], last ? finishReason : null, usageMetadata(sofar)));
  }
  if (failure !== null) out.push(failure.body());
  return out;
}

/** A part as JSON, without the fields left unset. */
function wirePart(part: Part): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(part)) if (value !== undefined && key !== 'other') out[key] = value;
  if (part.other !== undefined) Object.assign(out, part.other);
  return out;
}

/** A directive's arguments as the object `args` must be (anything else becomes `{}`). */
function argsObject(text: string): Json {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
  } catch {
    return {};
  }
}

/** Splits by code points, so no piece ends inside a surrogate pair. */
function split(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out.length > 0 ? out : [''];
}
