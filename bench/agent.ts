/**
 * A deterministic coding agent, driven through the official `openai` client: it asks the model
 * to read files (the simulator's `[[call ...]]` directives), answers each call with a file's
 * content, and starts a new user turn every few rounds. It keeps history as most agents do:
 * content and tool calls, reasoning dropped. Used by the end-to-end tests and the benchmarks.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

export interface AgentOptions {
  /** Requests to send in all. */
  requests: number;
  seed?: number;
  /** Bytes of each file the agent reads. */
  resultBytes?: number;
  /** Rounds of tool calls per user turn. */
  roundsPerTurn?: number;
  /** Every n-th round asks for two calls at once. */
  parallelEvery?: number;
  stream?: boolean;
  system?: string;
  headers?: Record<string, string>;
  /** Extra body fields (e.g. `prompt_cache_key`). */
  body?: Record<string, unknown>;
  /** Called before each request with the messages about to be sent; may return replacements. */
  rewrite?: (messages: ChatCompletionMessageParam[], index: number) => ChatCompletionMessageParam[];
}

export interface AgentStep {
  prompt_tokens?: number;
  cached_tokens?: number;
  /** Tokens written to the cache (Anthropic-style caches report them). */
  cache_write_tokens?: number;
  completion_tokens?: number;
  tool_calls: number;
  /** Wall time of the request as the client saw it, ms. */
  ms?: number;
}

export interface AgentRun {
  steps: AgentStep[];
  messages: ChatCompletionMessageParam[];
}

export const AGENT_TOOLS: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file of the repository.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'list_dir',
      description: 'List a directory.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

export async function runAgent(client: OpenAI, model: string, opts: AgentOptions): Promise<AgentRun> {
  const seed = opts.seed ?? 1;
  const resultBytes = opts.resultBytes ?? 2000;
  const roundsPerTurn = opts.roundsPerTurn ?? 4;
  const parallelEvery = opts.parallelEvery ?? 3;
  let messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: opts.system ?? 'You are a careful coding agent. Read before you write.' },
    { role: 'user', content: `Task ${seed}: find where the config is loaded. ${callDirective(seed, 0, 1)}` },
  ];
  const steps: AgentStep[] = [];
  let round = 0;
  for (let i = 0; i < opts.requests; i++) {
    if (opts.rewrite !== undefined) messages = opts.rewrite(messages, i);
    const request = { model, messages, tools: AGENT_TOOLS, ...opts.body };
    const started = performance.now();
    const message = opts.stream === true
      ? await streamed(client, request, opts.headers)
      : await plain(client, request, opts.headers);
    const ms = performance.now() - started;
    const calls = message.tool_calls ?? [];
    steps.push({ ...message.usage, tool_calls: calls.length, ms });
    messages.push({
      role: 'assistant',
      content: message.content,
      ...(calls.length === 0 ? {} : { tool_calls: calls }),
    } as ChatCompletionMessageParam);
    round++;
    const last = i + 1 >= opts.requests;
    if (calls.length > 0) {
      const endOfTurn = round >= roundsPerTurn;
      calls.forEach((call, j) => {
        const isLast = j === calls.length - 1;
        const next = last || !isLast ? '' : endOfTurn ? '[[say I have what I need.]]' : callDirective(seed, i + 1, (i + 1) % parallelEvery === 0 ? 2 : 1);
        messages.push({ role: 'tool', tool_call_id: call.id, content: fileContent(seed, i, j, resultBytes) + next });
      });
    } else {
      round = 0;
      messages.push({ role: 'user', content: `Next, check the tests for step ${i}. ${callDirective(seed, i + 1, 1)}` });
    }
  }
  return { steps, messages };
}

type ToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };
interface Reply {
  content: string | null;
  tool_calls?: ToolCall[];
  usage: { prompt_tokens?: number; cached_tokens?: number; cache_write_tokens?: number; completion_tokens?: number };
}

async function plain(client: OpenAI, body: object, headers?: Record<string, string>): Promise<Reply> {
  const res = await client.chat.completions.create(body as never, { headers });
  const completion = res as OpenAI.Chat.Completions.ChatCompletion;
  const msg = completion.choices[0]!.message;
  return {
    content: msg.content,
    ...(msg.tool_calls === undefined ? {} : { tool_calls: msg.tool_calls as ToolCall[] }),
    usage: usageOf(completion.usage),
  };
}

async function streamed(client: OpenAI, body: object, headers?: Record<string, string>): Promise<Reply> {
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } } as never, { headers });
  let content = '';
  const calls: ToolCall[] = [];
  let usage: Reply['usage'] = {};
  for await (const chunk of stream as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
    if (chunk.usage) usage = usageOf(chunk.usage);
    const delta = chunk.choices[0]?.delta;
    if (delta?.content) content += delta.content;
    for (const tc of delta?.tool_calls ?? []) {
      const call = (calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (tc.id) call.id = tc.id;
      if (tc.function?.name) call.function.name += tc.function.name;
      if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
    }
  }
  return { content: content === '' && calls.length > 0 ? null : content, ...(calls.length === 0 ? {} : { tool_calls: calls }), usage };
}

function usageOf(u: OpenAI.CompletionUsage | undefined | null): Reply['usage'] {
  return {
    prompt_tokens: u?.prompt_tokens,
    cached_tokens: u?.prompt_tokens_details?.cached_tokens,
    cache_write_tokens: (u?.prompt_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens,
    completion_tokens: u?.completion_tokens,
  };
}

export function callDirective(seed: number, step: number, count: number): string {
  let out = '';
  for (let k = 0; k < count; k++) {
    const name = (step + k) % 5 === 4 ? 'list_dir' : 'read_file';
    out += `[[call ${name} {"path":"src/mod${seed}_${step}_${k}.ts"}]]`;
  }
  return out;
}

/** Deterministic file content: numbered lines of plausible code. */
export function fileContent(seed: number, step: number, part: number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const line = `${n}: export const value_${seed}_${step}_${part}_${n} = compute(${(seed * 31 + step * 7 + n) % 997}, "${'x'.repeat(n % 17)}");`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n') + '\n';
}

/**
 * Ideal cached tokens: each request reads its predecessor's whole prompt, rounded down to the
 * provider's cache block (128 tokens for OpenAI-style caches; 1 for Anthropic's exact prefixes).
 */
export function idealCached(steps: readonly AgentStep[], minimum = 1024, block = 128): number {
  let ideal = 0;
  for (let i = 1; i < steps.length; i++) {
    const prev = steps[i - 1]!.prompt_tokens ?? 0;
    if (prev >= minimum) ideal += Math.floor(prev / block) * block;
  }
  return ideal;
}
