/**
 * The client side of the wires tests: one request through the proxy with the official `openai`
 * client (streamed or not, reasoning_content collected), the history an agent keeps (reasoning
 * dropped), and a deterministic tool session driven by the simulator's `[[...]]` directives.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageFunctionToolCall, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { World } from './harness.js';

/** What the client got back for one request. */
export interface Answer {
  content: string | null;
  toolCalls: ChatCompletionMessageFunctionToolCall[];
  /** Shown reasoning (`reasoning_content`), '' when none. */
  reasoning: string;
  usage: OpenAI.CompletionUsage | undefined;
}

export interface AskOptions {
  stream?: boolean;
  headers?: Record<string, string>;
  /** Extra body fields (`reasoning_effort`, ...). */
  body?: Record<string, unknown>;
}

/** One chat completion through the proxy with the official client, streamed or not. */
export async function ask(world: World, model: string, messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[] | undefined, opts: AskOptions = {}): Promise<Answer> {
  const request = { model, messages, ...(tools === undefined ? {} : { tools }), ...opts.body };
  if (opts.stream !== true) {
    const r = await world.client.chat.completions.create(request as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming, { headers: opts.headers });
    const msg = r.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning_content?: string };
    return { content: msg.content, toolCalls: (msg.tool_calls ?? []) as ChatCompletionMessageFunctionToolCall[], reasoning: msg.reasoning_content ?? '', usage: r.usage };
  }
  const stream = await world.client.chat.completions.create(
    { ...request, stream: true, stream_options: { include_usage: true } } as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming,
    { headers: opts.headers },
  );
  let content = '';
  let reasoning = '';
  let usage: OpenAI.CompletionUsage | undefined;
  const calls: ChatCompletionMessageFunctionToolCall[] = [];
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices[0]?.delta as (OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }) | undefined;
    content += delta?.content ?? '';
    reasoning += delta?.reasoning_content ?? '';
    for (const tc of delta?.tool_calls ?? []) {
      const call = (calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (tc.id) call.id = tc.id;
      call.function.name += tc.function?.name ?? '';
      call.function.arguments += tc.function?.arguments ?? '';
    }
  }
  return { content: content === '' && calls.length > 0 ? null : content, toolCalls: calls, reasoning, usage };
}

/**
 * Appends an answer to the history as an agent keeps it (content and calls; its reasoning dropped,
 * so only the proxy's log can give it back), then one tool result per call, the last one carrying
 * `next` (the simulator's directives for the next reply).
 */
export function keep(history: ChatCompletionMessageParam[], answer: Answer, result: (call: ChatCompletionMessageFunctionToolCall, i: number) => string, next: string): void {
  history.push({ role: 'assistant', content: answer.content, ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}) } as ChatCompletionMessageParam);
  answer.toolCalls.forEach((call, i) => {
    const last = i === answer.toolCalls.length - 1;
    history.push({ role: 'tool', tool_call_id: call.id, content: result(call, i) + (last ? next : '') });
  });
}

export const TOOLS: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'grep', description: 'Search the files.', parameters: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] } } },
];

/** About `tokens` simulator tokens (4 bytes each) of numbered lines naming `seed`. */
export function lines(tokens: number, seed: string): string {
  let s = '';
  for (let i = 0; s.length < tokens * 4; i++) s += `${seed} ${i}: const v${i} = load("${seed}/${i}");\n`;
  return s;
}

export interface SessionOptions {
  rounds: number;
  /** Tokens of each tool result. */
  resultTokens: number;
  /** Tokens of filler in the system prompt (past 1024 in all, the prompt is cacheable). */
  systemTokens: number;
  /** Each reply is told to think `step N of TAG` (`[[think]]`), for upstreams that think only when told. */
  think?: boolean;
  body?: Record<string, unknown>;
}

/**
 * A tool session of `rounds` requests on `model`, named by the header `x-session-id: t`, streamed
 * every other request; every third reply calls two tools at once. The client drops reasoning.
 */
export async function toolSession(world: World, model: string, t: string, o: SessionOptions): Promise<Answer[]> {
  const think = (n: number): string => (o.think === true ? ` [[think step ${n} of ${t}]]` : '');
  const history: ChatCompletionMessageParam[] = [
    { role: 'system', content: `${t} You are a careful agent.\n${lines(o.systemTokens, `${t}-sys`)}` },
    { role: 'user', content: `${t} find the loader [[call read_file {"path":"${t}/0.ts"}]]${think(0)}` },
  ];
  const answers: Answer[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const a = await ask(world, model, history, TOOLS, { stream: i % 2 === 0, headers: { 'x-session-id': t }, ...(o.body === undefined ? {} : { body: o.body }) });
    answers.push(a);
    const n = i + 1;
    const calls = n % 3 === 0
      ? `[[call read_file {"path":"${t}/${n}.ts"}]] [[call grep {"pattern":"p${n}"}]]`
      : `[[call read_file {"path":"${t}/${n}.ts"}]]`;
    keep(history, a, (call) => `${call.function.arguments}\n${lines(o.resultTokens, `${t}-r${i}`)}`, calls + think(n));
  }
  return answers;
}
