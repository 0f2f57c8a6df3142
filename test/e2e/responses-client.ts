/**
 * The client side of the inbound Responses tests: one `responses.create` through the proxy with the
 * official `openai` client (streamed or not; a stream's events checked for the API's order), a
 * stateless function-call loop as the SDK's docs write it (output items pushed back, then each
 * call's `function_call_output`), and the cache measure every inbound test shares.
 */
import type OpenAI from 'openai';
import type { ResponseInputItem, ResponseOutputItem, ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import { expect } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import type { World } from './harness.js';
import { lines } from './wires-client.js';
import { wholeBlockTokens } from './wire-prefix.js';

export interface Reply {
  id: string;
  output: ResponseOutputItem[];
  usage: ResponseUsage | undefined;
  text: string;
  /** Event types in order (streams only). */
  events: string[];
}

type Body = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>;

export async function respond(world: World, body: Body, stream: boolean, headers: Record<string, string> = {}): Promise<Reply> {
  if (!stream) {
    const r = await world.client.responses.create({ ...body, stream: false }, { headers });
    return { id: r.id, output: r.output, usage: r.usage, text: r.output_text, events: [] };
  }
  const s = await world.client.responses.create({ ...body, stream: true }, { headers });
  const events: ResponseStreamEvent[] = [];
  for await (const ev of s) events.push(ev);
  expect(events.map((e) => e.sequence_number)).toStrictEqual(events.map((_, i) => i));
  const last = events.at(-1);
  if (last?.type !== 'response.completed' && last?.type !== 'response.incomplete') throw new Error(`stream ended with ${String(last?.type)}`);
  // The items as output_item.done holds them are what the terminal response lists.
  const done = events.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []));
  expect(last.response.output).toStrictEqual(done);
  const text = done.flatMap((i) => (i.type === 'message' ? i.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('');
  return { id: last.response.id, output: last.response.output, usage: last.response.usage, text, events: events.map((e) => e.type) };
}

export function calls(output: readonly ResponseOutputItem[]): OpenAI.Responses.ResponseFunctionToolCall[] {
  return output.filter((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call');
}

export const RESPONSE_TOOLS: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, strict: false },
  { type: 'function', name: 'grep', description: 'Search the files.', parameters: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] }, strict: false },
];

export interface LoopOptions {
  rounds: number;
  /** Change what the client echoes of a reply before sending it back (to show the echo is ignored). */
  echo?: (item: ResponseOutputItem, round: number) => ResponseInputItem;
  include?: OpenAI.Responses.ResponseIncludable[];
}

/**
 * A stateless loop of `rounds` requests (streamed every other one) under `prompt_cache_key: t`:
 * each reply's output items go back as they came, then one result per call, the last carrying the
 * next round's directive; every third round calls two tools at once. The last round says done.
 */
export async function functionLoop(world: World, model: string, t: string, o: LoopOptions): Promise<Reply[]> {
  const input: ResponseInputItem[] = [{ role: 'user', content: `${t} find the loader [[call read_file {"path":"${t}/0.ts"}]]` }];
  const replies: Reply[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const body: Body = { model, instructions: `${t} You are a careful agent.\n${lines(1200, `${t}-sys`)}`, input: [...input], tools: RESPONSE_TOOLS, store: false, prompt_cache_key: t, include: o.include ?? ['reasoning.encrypted_content'] };
    const r = await respond(world, body, i % 2 === 0);
    replies.push(r);
    input.push(...r.output.map((item) => (o.echo === undefined ? (item as ResponseInputItem) : o.echo(item, i))));
    const n = i + 1;
    const next = n === o.rounds - 1 ? '[[say done]]' : n % 3 === 0 ? `[[call read_file {"path":"${t}/${n}.ts"}]] [[call grep {"pattern":"p${n}"}]]` : `[[call read_file {"path":"${t}/${n}.ts"}]]`;
    const made = calls(r.output);
    made.forEach((c, j) => input.push({ type: 'function_call_output', call_id: c.call_id, output: `${c.arguments}\n${lines(150, `${t}-r${i}`)}${j === made.length - 1 ? next : ''}` }));
  }
  return replies;
}

/**
 * Per request after the first, what the upstream read from its cache and what an unchanged prefix
 * let it read: the predecessor's whole prompt, in whole 128-token blocks from 1024 on where the
 * cache keeps blocks (the chat and Responses simulators), exactly where it keeps prefixes
 * (Anthropic's). From the usage the log holds, which is the upstream's, normalised.
 */
export function prefixReads(events: readonly LogEvent[], blocks: boolean): { cached: number; allowed: number }[] {
  const prompts = events.flatMap((e) => (e.type === 'llm.resp' && e.aborted !== true ? [e.reply.usage] : []));
  return prompts.slice(1).map((u, k) => {
    const before = prompts[k]?.prompt_tokens ?? 0;
    const allowed = !blocks ? before : before < 1024 ? 0 : wholeBlockTokens(before);
    return { cached: u?.cached_tokens ?? 0, allowed };
  });
}

/** Every request after the first read at least 99% of what its predecessor's prefix allowed. */
export function expectPrefixReads(events: readonly LogEvent[], blocks: boolean): void {
  const reads = prefixReads(events, blocks);
  expect(reads.length).toBeGreaterThan(0);
  for (const r of reads) {
    expect(r.allowed).toBeGreaterThan(1000);
    expect(r.cached, JSON.stringify(reads)).toBeGreaterThanOrEqual(Math.floor(0.99 * r.allowed));
  }
}
