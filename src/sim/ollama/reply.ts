/**
 * A reply plan as Ollama sends it: the NDJSON lines of a stream (thinking pieces, content pieces,
 * the calls in one line, then the `done: true` line with the metrics) and the whole body of
 * `stream: false`. Calls carry no id, as most Ollama versions send them; their arguments are objects.
 */
import type { ReplyPlan } from '../replies.js';
import type { OllamaError } from './request.js';

export interface OllamaMeta {
  model: string;
  /** RFC 3339, from the simulator's clock. */
  createdAt: string;
}

/** Durations in nanoseconds, as Ollama reports them. */
export interface OllamaMetrics {
  promptEvalCount: number;
  promptEvalNs: number;
  evalCount: number;
  evalNs: number;
  loadNs: number;
}

const TEXT_PIECE = 16;

function callsOf(plan: ReplyPlan): Record<string, unknown>[] {
  return plan.toolCalls.map((call, index) => ({ function: { index, name: call.name, arguments: argumentsObject(call.arguments) } }));
}

/** A directive's arguments that are not a JSON object go as `{}`: Ollama only ever returns objects. */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function metricsOf(m: OllamaMetrics): Record<string, unknown> {
  return {
    total_duration: m.loadNs + m.promptEvalNs + m.evalNs,
    load_duration: m.loadNs,
    prompt_eval_count: m.promptEvalCount,
    prompt_eval_duration: m.promptEvalNs,
    eval_count: m.evalCount,
    eval_duration: m.evalNs,
  };
}

export function ollamaWhole(meta: OllamaMeta, plan: ReplyPlan, metrics: OllamaMetrics): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: plan.content ?? '' };
  if (plan.thinking !== null) message.thinking = plan.thinking;
  if (plan.toolCalls.length > 0) message.tool_calls = callsOf(plan);
  return { model: meta.model, created_at: meta.createdAt, message, done_reason: 'stop', done: true, ...metricsOf(metrics) };
}

/**
 * The lines of a stream. With `failure`, the stream stops after the thinking and half the content
 * with Ollama's mid-stream error line `{"error": ...}` (the status stays 200).
 */
export function ollamaStreamLines(meta: OllamaMeta, plan: ReplyPlan, metrics: OllamaMetrics, failure: OllamaError | null): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const line = (message: Record<string, unknown>): void => {
    out.push({ model: meta.model, created_at: meta.createdAt, message: { role: 'assistant', content: '', ...message }, done: false });
  };
  for (const piece of pieces(plan.thinking ?? '')) line({ thinking: piece });
  const content = pieces(plan.content ?? '');
  if (failure !== null) {
    const sent = content.length > 0 ? content.slice(0, Math.ceil(content.length / 2)) : ['Partial '];
    for (const piece of sent) line({ content: piece });
    out.push(failure.body());
    return out;
  }
  for (const piece of content) line({ content: piece });
  if (plan.toolCalls.length > 0) line({ tool_calls: callsOf(plan) });
  out.push({ model: meta.model, created_at: meta.createdAt, message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', ...metricsOf(metrics) });
  return out;
}

/** Splits by code points, so no piece ends inside a surrogate pair. */
function pieces(text: string): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += TEXT_PIECE) out.push(points.slice(i, i + TEXT_PIECE).join(''));
  return out;
}
