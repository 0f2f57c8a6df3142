/**
 * What the proxy answers its clients, who speak OpenAI Chat Completions through the official SDK:
 * a NeutralReply as a `chat.completion`, and StreamDeltas as `chat.completion.chunk`s. Errors are
 * not rendered here: core's `errorBody` is the one renderer of `{"error":{...}}`, sent as an SSE
 * data frame once a stream has started (the SDK throws on a chunk holding `error`).
 */
import type { FinishReason, NeutralReply, Usage } from '../../core/types.js';
import type { StreamDelta } from '../types.js';
import type { ClientChunk, ClientCompletion, ClientDelta, ClientFinishReason, ClientUsage } from './wire-types.js';

export interface ClientMeta {
  /** `chatcmpl-...`, made by the proxy (ids and time are passed in: this room reads no clock). */
  id: string;
  /** Unix seconds. */
  created: number;
  /** The model name the client asked for. */
  model: string;
}

/**
 * OpenAI's usage shape requires the three counts, so an unknown count is written as 0 there (the
 * log keeps it unknown). The details appear only with the figures the upstream reported.
 */
export function renderUsage(usage: Usage | undefined): ClientUsage {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  const out: ClientUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (usage?.cached_tokens !== undefined || usage?.cache_write_tokens !== undefined) {
    out.prompt_tokens_details = {};
    if (usage.cached_tokens !== undefined) out.prompt_tokens_details.cached_tokens = usage.cached_tokens;
    if (usage.cache_write_tokens !== undefined) out.prompt_tokens_details.cache_write_tokens = usage.cache_write_tokens;
  }
  if (usage?.reasoning_tokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoning_tokens };
  return out;
}

/** OpenAI has no `error` finish reason; a reply without one ended as its calls say. */
export function clientFinishReason(reason: FinishReason | null, hasToolCalls: boolean): ClientFinishReason {
  if (reason === null || reason === 'error') return hasToolCalls ? 'tool_calls' : 'stop';
  return reason;
}

export function renderCompletion(reply: NeutralReply, meta: ClientMeta): ClientCompletion {
  const calls = reply.tool_calls ?? [];
  const message: ClientCompletion['choices'][number]['message'] = { role: 'assistant', content: reply.content, refusal: null };
  if (reply.thinking !== undefined && reply.thinking.length > 0) message.reasoning_content = reply.thinking;
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: clientFinishReason(reply.finish_reason, calls.length > 0) }],
    usage: renderUsage(reply.usage),
  };
}

export interface ChunkRenderer {
  /** The first chunk (`role: assistant`), once; `render` sends it itself when not sent yet. */
  start(): ClientChunk[];
  render(delta: StreamDelta): ClientChunk[];
  /**
   * The finish chunk if the stream gave no finish reason, then (when the client asked for
   * `stream_options.include_usage`) the usage chunk with empty `choices`: the last usage seen, or
   * `usage` when given. The caller writes `data: [DONE]` after these.
   */
  end(usage?: Usage): ClientChunk[];
}

export function createChunkRenderer(meta: ClientMeta & { includeUsage: boolean }): ChunkRenderer {
  let started = false;
  let finished = false;
  let toolCalls = false;
  let usage: Usage | undefined;

  const chunk = (delta: ClientDelta, finish: ClientFinishReason | null = null): ClientChunk => {
    const out: ClientChunk = {
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (meta.includeUsage) out.usage = null;
    return out;
  };
  const start = (): ClientChunk[] => {
    if (started) return [];
    started = true;
    return [chunk({ role: 'assistant', content: '' })];
  };
  const finish = (reason: FinishReason | null): ClientChunk[] => {
    if (finished) return [];
    finished = true;
    return [chunk({}, clientFinishReason(reason, toolCalls))];
  };

  return {
    start,
    render(delta) {
      const out = start();
      switch (delta.type) {
        case 'content':
          out.push(chunk({ content: delta.text }));
          break;
        case 'thinking':
          out.push(chunk({ reasoning_content: delta.text }));
          break;
        case 'tool_call_start':
          toolCalls = true;
          out.push(chunk({ tool_calls: [{ index: delta.index, id: delta.id, type: 'function', function: { name: delta.name, arguments: '' } }] }));
          break;
        case 'tool_call_args':
          out.push(chunk({ tool_calls: [{ index: delta.index, function: { arguments: delta.text } }] }));
          break;
        case 'finish':
          out.push(...finish(delta.reason));
          break;
        case 'usage':
          usage = delta.usage;
          break;
        case 'error':
          // Written by the proxy as an error frame (see the file comment).
          break;
        case 'block':
          // Opaque blocks are not shown on this wire: their text came as reasoning_content.
          break;
      }
      return out;
    },
    end(finalUsage) {
      const out = [...start(), ...finish(null)];
      if (meta.includeUsage) {
        out.push({ id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, choices: [], usage: renderUsage(finalUsage ?? usage) });
      }
      return out;
    },
  };
}
