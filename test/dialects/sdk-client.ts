/**
 * Hands what the proxy would send its client to the official `openai` SDK (through its `fetch`
 * option: no socket) and returns what the SDK made of it, stream and non-stream.
 */
import OpenAI from 'openai';
import type { NeutralReply, ToolCall } from '../../src/core/types.js';
import { createChunkRenderer, renderCompletion } from '../../src/dialects/openai-chat/client-render.js';
import { SSE_DONE, sseJson } from '../../src/dialects/sse-writer.js';
import type { StreamDelta } from '../../src/dialects/types.js';

export interface SeenMessage {
  content: string | null;
  reasoning_content: string | undefined;
  tool_calls: ToolCall[] | undefined;
  finish_reason: string;
  usage: { prompt_tokens: number; cached_tokens: number | undefined; reasoning_tokens: number | undefined };
}

const META = { id: 'chatcmpl-proxy-1', created: 1760000000, model: 'client-model' };

function sdkAnswering(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'test-key',
    baseURL: 'http://proxy.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': contentType } }),
  });
}

type SdkCompletion = OpenAI.Chat.Completions.ChatCompletion;

function seen(completion: SdkCompletion, reasoning: string | undefined): SeenMessage {
  const choice = completion.choices[0];
  if (choice === undefined) throw new Error('no choice');
  const calls = choice.message.tool_calls?.map((c) => {
    if (c.type !== 'function') throw new Error(`unexpected tool call type ${c.type}`);
    return { id: c.id, name: c.function.name, arguments: c.function.arguments };
  });
  return {
    content: choice.message.content,
    reasoning_content: reasoning,
    tool_calls: calls,
    finish_reason: choice.finish_reason,
    usage: {
      prompt_tokens: completion.usage?.prompt_tokens ?? -1,
      cached_tokens: completion.usage?.prompt_tokens_details?.cached_tokens,
      reasoning_tokens: completion.usage?.completion_tokens_details?.reasoning_tokens,
    },
  };
}

export function renderSse(deltas: StreamDelta[], includeUsage: boolean): string {
  const renderer = createChunkRenderer({ ...META, includeUsage });
  let body = '';
  for (const d of deltas) for (const c of renderer.render(d)) body += sseJson(c);
  for (const c of renderer.end()) body += sseJson(c);
  return body + SSE_DONE;
}

export async function replayThroughOpenAISdk(deltas: StreamDelta[], reply: NeutralReply): Promise<{ streamed: SeenMessage; whole: SeenMessage }> {
  const params = { model: 'client-model', messages: [{ role: 'user' as const, content: 'hi' }] };

  const streaming = sdkAnswering(renderSse(deltas, true), 'text/event-stream');
  const stream = streaming.chat.completions.stream({ ...params, stream_options: { include_usage: true } });
  // The SDK's accumulator overwrites unknown delta fields; the reasoning is summed from the chunks.
  let reasoning: string | undefined;
  for await (const chunk of stream) {
    const piece = (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content;
    if (piece !== undefined) reasoning = (reasoning ?? '') + piece;
  }
  const streamed = seen(await stream.finalChatCompletion(), reasoning);

  const plain = sdkAnswering(JSON.stringify(renderCompletion(reply, META)), 'application/json');
  const completion = await plain.chat.completions.create(params);
  const whole = seen(completion, (completion.choices[0]?.message as { reasoning_content?: string } | undefined)?.reasoning_content);
  return { streamed, whole };
}
