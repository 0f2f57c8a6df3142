/**
 * A small agent driver on undici for the peers bench: several conversations at once, each request
 * the whole history plus one new user turn, the reply appended as the target gave it, so bodies
 * grow as an agent's do. Messages are serialised once and the body is their concatenation, so the
 * client's own cost stays flat as histories grow.
 */
import { Pool } from 'undici';
import { AGENT_TOOLS, fileContent } from '../agent.js';
import type { Target } from './targets.js';

export interface DriveOptions {
  /** Conversations in flight at once (one connection each). */
  concurrency: number;
  /** Conversations in all; each starts when one before it finishes. */
  conversations: number;
  /** Requests per conversation. */
  turns: number;
  /** Bytes of the user turn added before request `turn` (0-based). */
  turnBytes: (turn: number) => number;
  stream: boolean;
  /** Makes every conversation's first message unique across runs and targets. */
  tag: string;
  /**
   * The head every request repeats: `small` (a one-line system prompt, four tools), or `agent`, the
   * size a coding agent sends (AGENT_HEAD): a long system prompt, a large tool catalogue and a
   * first message carrying context files.
   */
  head?: 'small' | 'agent';
  /** Messages (already serialised) a conversation starts from, after the system prompt; absent: none. */
  history?: (conversation: number) => string[];
  /** Called before each request is sent (e.g. to read a counter where measuring starts). */
  beforeRequest?: (conversation: number, turn: number) => void;
}

export interface Sample {
  conversation: number;
  turn: number;
  ms: number;
}

export interface DriveResult {
  samples: Sample[];
  wallMs: number;
}

const SYSTEM = JSON.stringify({ role: 'system', content: 'You are a careful coding agent. Read before you write; keep changes small.' });
const TOOLS = JSON.stringify(AGENT_TOOLS);

/**
 * A coding agent's head, in the sizes Claude Code, Codex and opencode send: a ~16 KB system
 * prompt, 30 tools with long descriptions and schemas (~30 KB), and a first user message of ~13 KB
 * (context files, the project's instructions), all repeated unchanged on every request.
 */
const HEAD_SYSTEM = `You are a coding agent working in the user's repository.\n${fileContent(91, 0, 0, 16_000)}`;
const HEAD_TOOLS = Array.from({ length: 30 }, (_, i) => ({
  name: `tool_${i}`,
  description: fileContent(92, i, 0, 700),
  parameters: { type: 'object', properties: { path: { type: 'string', description: 'A path in the repository.' }, text: { type: 'string', description: fileContent(93, i, 0, 150) }, limit: { type: 'integer' } }, required: ['path'] },
}));

export const AGENT_HEAD = {
  /** The parts, for other wires (bench/wires.ts). */
  systemText: HEAD_SYSTEM,
  toolList: HEAD_TOOLS,
  contextText: (tag: string, conversation: number) => `<context conversation="${tag}-${conversation}">\n${fileContent(94, 0, 0, 13_000)}\n</context>`,
  /** Serialised for the chat wire. */
  system: JSON.stringify({ role: 'system', content: HEAD_SYSTEM }),
  tools: JSON.stringify(HEAD_TOOLS.map((t) => ({ type: 'function', function: t }))),
  context: (tag: string, conversation: number) => JSON.stringify({ role: 'user', content: AGENT_HEAD.contextText(tag, conversation) }),
};

export async function drive(target: Target, opts: DriveOptions): Promise<DriveResult> {
  const pool = new Pool(target.origin, { connections: opts.concurrency, keepAliveTimeout: 60_000 });
  const samples: Sample[] = [];
  let next = 0;
  const worker = async () => {
    for (let c = next++; c < opts.conversations; c = next++) {
      const conversation = new Conversation(pool, target, opts, c);
      for (let turn = 0; turn < opts.turns; turn++) {
        opts.beforeRequest?.(c, turn);
        samples.push({ conversation: c, turn, ms: await conversation.step() });
      }
    }
  };
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
  } finally {
    await pool.close();
  }
  return { samples, wallMs: performance.now() - started };
}

/** One conversation, a request at a time: `step()` adds a user turn, sends the history, appends the reply. */
export class Conversation {
  readonly #pool: Pool;
  readonly #target: Target;
  readonly #opts: Pick<DriveOptions, 'stream' | 'tag' | 'turnBytes' | 'history' | 'head'>;
  readonly #id: number;
  readonly #head: string;
  readonly #headers: Record<string, string>;
  readonly #messages: string[];
  #turn = 0;

  constructor(pool: Pool, target: Target, opts: Pick<DriveOptions, 'stream' | 'tag' | 'turnBytes' | 'history' | 'head'>, id: number) {
    this.#pool = pool;
    this.#target = target;
    this.#opts = opts;
    this.#id = id;
    const agent = opts.head === 'agent';
    this.#head = `{"model":${JSON.stringify(target.model)},${opts.stream ? '"stream":true,"stream_options":{"include_usage":true},' : ''}"tools":${agent ? AGENT_HEAD.tools : TOOLS},"messages":[`;
    this.#headers = { 'content-type': 'application/json', ...target.headers };
    this.#messages = agent ? [AGENT_HEAD.system, AGENT_HEAD.context(opts.tag, id), ...(opts.history?.(id) ?? [])] : [SYSTEM, ...(opts.history?.(id) ?? [])];
  }

  /** Sends the next request; resolves to its latency in ms, to the reply's last byte. */
  async step(): Promise<number> {
    const turn = this.#turn++;
    this.#messages.push(JSON.stringify({ role: 'user', content: userTurn(this.#opts.tag, this.#id, turn, this.#opts.turnBytes(turn)) }));
    const started = performance.now();
    const res = await this.#pool.request({ method: 'POST', path: this.#target.path, headers: this.#headers, body: this.#head + this.#messages.join(',') + ']}' });
    const text = await res.body.text();
    const ms = performance.now() - started;
    const name = this.#target.name;
    if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${res.statusCode} at turn ${turn}: ${text.slice(0, 500)}`);
    const content = this.#opts.stream ? streamedContent(text, name) : (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    this.#messages.push(JSON.stringify({ role: 'assistant', content }));
    return ms;
  }
}

/** The reply text of an SSE chat stream: every chunk's content delta, up to `[DONE]`. */
function streamedContent(text: string, name: string): string {
  let content = '';
  let done = false;
  for (const event of text.split(/\r?\n\r?\n/)) {
    for (const line of event.split(/\r?\n/)) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') done = true;
      else {
        const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string | null } }[]; error?: unknown };
        if (chunk.error !== undefined) throw new Error(`${name}: error frame in stream: ${data.slice(0, 500)}`);
        content += chunk.choices?.[0]?.delta?.content ?? '';
      }
    }
  }
  if (!done) throw new Error(`${name}: stream ended without [DONE]: ${text.slice(0, 500)}`);
  return content;
}

/** A user turn of about `bytes` bytes: an instruction and a pasted file, unique to its conversation. */
function userTurn(tag: string, conversation: number, turn: number, bytes: number): string {
  const intro = `Conversation ${tag}-${conversation}, turn ${turn}: review this and apply the fix.`;
  return bytes <= intro.length ? intro : `${intro}\n${fileContent(conversation + 1, turn, 0, bytes - intro.length - 1)}`;
}

/**
 * A resumed session's transcript: a task, then `results` read_file calls, each answered by a
 * tool result of `bytes / results` bytes (a conversation already grown to `bytes`).
 */
export function grownHistory(tag: string, conversation: number, bytes: number, results: number): string[] {
  const out = [JSON.stringify({ role: 'user', content: `Conversation ${tag}-${conversation}: find where the config is loaded and fix the default port.` })];
  for (let i = 0; i < results; i++) {
    const id = `call_${conversation}_${i}`;
    out.push(JSON.stringify({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/part${i}.ts` }) } }] }));
    out.push(JSON.stringify({ role: 'tool', tool_call_id: id, content: fileContent(conversation + 7, i, 1, Math.floor(bytes / results)) }));
  }
  out.push(JSON.stringify({ role: 'assistant', content: `I have read all ${results} parts.` }));
  return out;
}
