/**
 * An end-to-end world for the wires other than openai-chat: the simulator, a recording tap in front
 * of ALL of it (every upstream request and its whole response text are kept), and the proxy with
 * one provider per wire, all pointing at the tap:
 *
 *   `an`: anthropic preset -> `/anthropic/v1/messages`
 *   `ol`: ollama preset    -> `/api/chat`
 *   `rs`: openai-responses -> `/v1/responses`
 *   `ds`: deepseek preset  -> `/deepseek/v1/chat/completions`
 *   `oa`: generic preset   -> `/openai/v1/chat/completions`
 *   `op`: openai preset    -> `/openai/v1/chat/completions` (OpenAI before GPT-5.6)
 *   `op56`: openai preset  -> `/gpt56/v1/chat/completions` (GPT-5.6 and later)
 *   `rs56`: openai-responses -> `/gpt56/v1/responses`
 *
 * The config is written after the tap has its address, which `startWorld` (harness.ts) cannot do.
 * The world has the harness's `World` shape, so `readSessions`, `replayAll` and friends take it.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEvent } from '../../src/core/events.js';
import { createSim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';
import { openWorld, readSessions, startTap, type Tap, type TappedRequest, type World } from './harness.js';

export type WireExchange = TappedRequest;

export type WireTap = Tap;

export interface WiresWorld extends World {
  tap: WireTap;
}

export interface WiresWorldOptions {
  sim?: SimOptions;
  /** `[models.*]` tables (and anything else) appended to the config; a function is given the tap's origin. */
  models: string | ((tapOrigin: string) => string);
  /** `body_limit` in bytes. */
  bodyLimit?: number;
}

export async function startWiresWorld(opts: WiresWorldOptions): Promise<WiresWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'pp-wires-'));
  const sim = await createSim({ host: '127.0.0.1', port: 0, ...opts.sim });
  const tap = await startTap(sim.origin);
  const toml = `
listen = "127.0.0.1:0"
data_dir = ${JSON.stringify(join(dir, 'data'))}
${opts.bodyLimit === undefined ? '' : `body_limit = ${opts.bodyLimit}`}

[providers.an]
preset = "anthropic"
base_url = "${tap.origin}/anthropic/v1"
api_key_env = ""

[providers.ol]
preset = "ollama"
base_url = "${tap.origin}"

[providers.rs]
preset = "openai-responses"
base_url = "${tap.origin}/v1"
api_key_env = ""

[providers.ds]
preset = "deepseek"
base_url = "${tap.origin}/deepseek/v1"
api_key_env = ""

[providers.oa]
preset = "generic"
base_url = "${tap.origin}/openai/v1"

[providers.op]
preset = "openai"
base_url = "${tap.origin}/openai/v1"
api_key_env = ""

[providers.op56]
preset = "openai"
base_url = "${tap.origin}/gpt56/v1"
api_key_env = ""

[providers.rs56]
preset = "openai-responses"
base_url = "${tap.origin}/gpt56/v1"
api_key_env = ""
${typeof opts.models === 'function' ? opts.models(tap.origin) : opts.models}
`;
  return openWorld(dir, sim, tap, toml);
}


/** The tapped exchanges since index `from` whose path starts with `prefix`. */
export function wire(world: WiresWorld, prefix: string, from = 0): WireExchange[] {
  return world.tap.requests.slice(from).filter((r) => r.path.startsWith(prefix));
}

/** The `data:` payloads of an SSE text, parsed as JSON (non-JSON payloads skipped). */
export function sseData(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const frame of text.split(/\r?\n\r?\n/)) {
    const data = frame.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
    if (data === '' || data === '[DONE]') continue;
    try {
      out.push(JSON.parse(data) as Record<string, unknown>);
    } catch {
      // a ping with a non-JSON payload, say: not what the tests read
    }
  }
  return out;
}

/** The lines of an NDJSON text, parsed. */
export function ndjson(text: string): Record<string, unknown>[] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

export async function metricsText(world: World): Promise<string> {
  return (await fetch(`${world.proxy.url}/metrics`)).text();
}

/** The thinking blocks of an Anthropic SSE reply, assembled from their deltas, in order. */
export function anthropicThinking(text: string): { type: 'thinking'; thinking: string; signature: string }[] {
  const blocks = new Map<number, { type: 'thinking'; thinking: string; signature: string }>();
  for (const ev of sseData(text)) {
    const index = ev.index as number;
    if (ev.type === 'content_block_start' && (ev.content_block as { type?: string }).type === 'thinking') {
      blocks.set(index, { type: 'thinking', thinking: '', signature: '' });
    }
    const block = blocks.get(index);
    const delta = ev.delta as { type?: string; thinking?: string; signature?: string } | undefined;
    if (ev.type !== 'content_block_delta' || block === undefined || delta === undefined) continue;
    if (delta.type === 'thinking_delta') block.thinking += delta.thinking ?? '';
    if (delta.type === 'signature_delta') block.signature = delta.signature ?? '';
  }
  return [...blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b);
}

/** The reasoning items of a Responses SSE reply, as their `output_item.done` events hold them. */
export function responsesReasoning(text: string): Record<string, unknown>[] {
  return sseData(text)
    .filter((ev) => ev.type === 'response.output_item.done' && (ev.item as { type?: string }).type === 'reasoning')
    .map((ev) => ev.item as Record<string, unknown>);
}

/** The events of the one session whose log holds `marker`. */
export async function sessionWith(world: World, marker: string): Promise<LogEvent[]> {
  const found = [...(await readSessions(world)).values()].filter((events) => JSON.stringify(events).includes(marker));
  if (found.length !== 1) throw new Error(`expected one session holding ${marker}, found ${found.length}`);
  return found[0]!;
}

/**
 * Anthropic's own rule (the simulator checks it too): with thinking on, a request that ends inside
 * a tool loop (its last turn holds tool results) must have its last assistant turn start with a
 * thinking block ("When `thinking` is enabled, a final `assistant` message must start with a
 * thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks) ... To avoid
 * this requirement, disable `thinking`."). True when the request breaks it.
 */
export function breaksFinalThinkingRule(req: WireExchange): boolean {
  return asksThinking(req) && loopWithoutThinkingBlock(req);
}

/** The request asks for thinking (`enabled` or `adaptive`). */
export function asksThinking(req: WireExchange): boolean {
  const thinking = req.body.thinking as { type: string } | undefined;
  return thinking !== undefined && thinking.type !== 'disabled';
}

/**
 * The request ends inside a tool loop whose last assistant turn does not start with a thinking
 * block: it may not ask for thinking. A check that no request breaks the rule says little unless
 * the requests that do not ask for thinking are exactly these.
 */
export function loopWithoutThinkingBlock(req: WireExchange): boolean {
  const messages = req.body.messages as { role: string; content: { type: string }[] }[];
  const last = messages.at(-1);
  const inLoop = last?.role === 'user' && last.content.some((b) => b.type === 'tool_result');
  const lastAssistant = messages.findLast((m) => m.role === 'assistant');
  const first = lastAssistant?.content[0]?.type;
  return inLoop && lastAssistant !== undefined && first !== 'thinking' && first !== 'redacted_thinking';
}
