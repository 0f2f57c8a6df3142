/**
 * A coding agent as many are written: it keeps its history unredacted and resends all of it each
 * turn, re-serialising the tool-call arguments it holds (key order and spacing change from one
 * request to the next). Some of the files it reads are `.env` files holding credentials. Driven
 * through the official `openai` client; the simulator's `[[call ...]]` directives pick the files.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { mulberry32 } from '../src/core/prng.js';
import { AGENT_TOOLS, fileContent } from './agent.js';
import { envFile } from './planted-credentials.js';

export interface ResendingOptions {
  requests: number;
  seed: number;
  /** One file read in this many is an `.env` with credentials; 0 plants none. */
  plantEvery: number;
  roundsPerTurn?: number;
}

export interface ResendingRun {
  /** Each message once, as the client first sent it, plus every reply as received (JSON bytes). */
  conversationBytes: number;
  toolResults: number;
  planted: number;
  /** Secrets that were sent, to check the log for. */
  secrets: string[];
}

interface HeldCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

type Held = ChatCompletionMessageParam | { role: 'assistant'; content: string | null; calls: HeldCall[] };

const SYSTEM = 'You are a careful coding agent working in a TypeScript repository. Read before you write; '
  + 'prefer small, reviewed changes; run the tests after every edit and report what they say.';

export async function runResendingAgent(client: OpenAI, model: string, opts: ResendingOptions): Promise<ResendingRun> {
  const { seed, plantEvery } = opts;
  const roundsPerTurn = opts.roundsPerTurn ?? 4;
  const rand = mulberry32(seed);
  const run: ResendingRun = { conversationBytes: 0, toolResults: 0, planted: 0, secrets: [] };
  let reads = 0;
  // The path of the next file to read: an `.env` once every `plantEvery` reads.
  const nextCall = (): string => {
    reads++;
    const env = plantEvery > 0 && reads % plantEvery === Math.floor(plantEvery / 2);
    const path = env ? `services/svc${reads}/.env` : `src/mod${seed}_${reads}.ts`;
    return `[[call read_file {"path":"${path}","offset":0,"limit":${200 + reads}}]]`;
  };
  const history: Held[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Task ${seed}: find where the config is loaded and why the port is ignored. ${nextCall()}` },
  ];
  let sent = 0;
  let round = 0;
  for (let i = 0; i < opts.requests; i++) {
    const messages = history.map((m) => toWire(m, i));
    for (const m of messages.slice(sent)) run.conversationBytes += jsonBytes(m);
    sent = messages.length;
    const res = await client.chat.completions.create({ model, messages, tools: AGENT_TOOLS });
    const reply = res.choices[0]!.message;
    const calls = (reply.tool_calls ?? []).filter((c) => c.type === 'function');
    run.conversationBytes += jsonBytes({ role: 'assistant', content: reply.content, ...(calls.length === 0 ? {} : { tool_calls: calls }) });
    history.push({ role: 'assistant', content: reply.content, calls: calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) as Record<string, unknown> })) });
    sent++;
    round++;
    if (calls.length === 0) {
      round = 0;
      history.push({ role: 'user', content: `Good. Now check the tests for step ${i}. ${nextCall()}` });
      continue;
    }
    const parallel = round % 3 === 0 ? 2 : 1;
    calls.forEach((call, j) => {
      const path = String((JSON.parse(call.function.arguments) as { path?: unknown }).path);
      let content: string;
      if (path.endsWith('.env')) {
        const file = envFile(seed * 1000 + i * 10 + j);
        content = file.text;
        run.planted++;
        run.secrets.push(...file.secrets);
      } else {
        content = fileContent(seed, i, j, 1500 + Math.floor(rand() * 7500));
      }
      run.toolResults++;
      if (j === calls.length - 1) content += round >= roundsPerTurn ? '[[say I have what I need.]]' : Array.from({ length: parallel }, nextCall).join('');
      history.push({ role: 'tool', tool_call_id: call.id, content });
    });
  }
  return run;
}

/** The message as sent on request `i`: held tool-call arguments serialised anew. */
function toWire(m: Held, i: number): ChatCompletionMessageParam {
  if (!('calls' in m)) return m;
  if (m.calls.length === 0) return { role: 'assistant', content: m.content };
  return {
    role: 'assistant',
    content: m.content,
    tool_calls: m.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: reserialise(c.args, i) } })),
  };
}

/** Keys reversed on even requests, sorted on odd ones; every third request pretty-printed. */
function reserialise(args: Record<string, unknown>, i: number): string {
  const keys = Object.keys(args);
  const order = i % 2 === 0 ? [...keys].reverse() : [...keys].sort();
  const reordered = Object.fromEntries(order.map((k) => [k, args[k]]));
  return i % 3 === 0 ? JSON.stringify(reordered, null, 1) : JSON.stringify(reordered);
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}
