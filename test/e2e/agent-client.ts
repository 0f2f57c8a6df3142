/**
 * A coding agent as real ones behave towards the proxy, without I/O: it keeps its own history (its
 * messages as it wrote them, credentials and images included, and each reply as it received it),
 * and sends all of it again on every request plus what is new. On the way it does what clients do
 * (docs/architecture.md 4.1, reference/clients.md): drops the reasoning of earlier replies or sends
 * it back, writes tool-call arguments back with other key orders and spacing, sends `null` or `''`
 * beside tool calls, lists its tools in another order. The model is steered with the simulator's
 * `[[call ...]]` / `[[say ...]]` directives at the end of the last message.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { mulberry32 } from '../../src/core/prng.js';
import {
  callArguments, Credentials, fileRead, int, phrase, pick, pngDataUrl, reserialise, shuffled, shuffleKeys, type Rng,
} from './agent-content.js';

export interface AgentBehaviour {
  /** Share of tool results holding a credential. */
  credentialRate: number;
  /** Share of user messages holding a pasted credential. */
  userCredentialRate: number;
  /** The system prompt holds a credential (a project's instructions naming a staging token). */
  systemCredential: boolean;
  /** Share of user messages with an image (a data URL). */
  imageRate: number;
  /** Chance, per earlier reply and request, that its reasoning is left out (1: never sent back). */
  dropReasoning: number;
  /** Write arguments, message keys and the tool list anew (other orders, spacing) on every request. */
  reserialise: boolean;
  unicode: boolean;
  /** Most tool calls in one reply. */
  maxParallel: number;
  /** Tool rounds before the model is told to answer in text and the user speaks again. */
  roundsPerTurn: number;
  /** Typical bytes of a tool result (each is 0.5x to 1.5x of it). */
  resultBytes: number;
  /** Bytes of filler in the system prompt. */
  systemBytes: number;
  /** The simulator waits this long before each stream chunk (`[[slow MS]]`), so streams take time. */
  slowMs?: number;
}

export const REAL_CLIENT: AgentBehaviour = {
  credentialRate: 0.1, userCredentialRate: 0.1, systemCredential: false, imageRate: 0.1, dropReasoning: 0.7, reserialise: true, unicode: true,
  maxParallel: 3, roundsPerTurn: 4, resultBytes: 1500, systemBytes: 5000,
};

/** A reply as the client received it. */
export interface Received {
  content: string | null;
  toolCalls: { id: string; function: { name: string; arguments: string } }[];
  /** Reasoning shown to the client (`reasoning_content`), '' when none. */
  reasoning: string;
}

const TOOL_NAMES = ['read_file', 'grep', 'run'] as const;

export const AGENT_TOOLS: ChatCompletionTool[] = [
  tool('read_file', 'Read part of a file.', ['path'], {
    path: { type: 'string' }, range: { type: 'object', properties: { start: { type: 'integer' }, end: { type: 'integer' } } }, encoding: { type: 'string' },
  }),
  tool('grep', 'Search the repository.', ['pattern'], {
    pattern: { type: 'string' }, path: { type: 'string' }, options: { type: 'object' }, globs: { type: 'array', items: { type: 'string' } },
  }),
  tool('run', 'Run a shell command.', ['cmd'], { cmd: { type: 'string' }, cwd: { type: 'string' }, env: { type: 'object' }, timeout_ms: { type: 'integer' } }),
];

function tool(name: string, description: string, required: string[], properties: Record<string, unknown>): ChatCompletionTool {
  return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required } } };
}

type Kept =
  | { role: 'system' | 'user' | 'tool'; msg: ChatCompletionMessageParam }
  | { role: 'assistant'; reply: Received };

export class AgentClient {
  readonly credentials: Credentials;
  readonly #rng: Rng;
  readonly #b: AgentBehaviour;
  readonly #tag: string;
  readonly #history: Kept[] = [];
  /** History entries already sent once. */
  #sent = 0;
  #round = 0;
  #step = 0;
  /** Client-written messages (system, user, tool), and the JSON bytes of each as first sent. */
  distinctMessages = 0;
  distinctBytes = 0;

  constructor(seed: number, tag: string, behaviour: AgentBehaviour) {
    this.#rng = mulberry32(seed);
    this.#b = behaviour;
    this.#tag = tag;
    this.credentials = new Credentials(seed);
    const filler = phrase(this.#rng, Math.ceil(behaviour.systemBytes / 7), behaviour.unicode);
    const secret = behaviour.systemCredential ? `\nProject notes: ${this.credentials.inSystemText(this.#rng)}` : '';
    this.#keep({ role: 'system', content: `${tag} You are a careful coding agent. Read before you write.${secret}\n${filler}` });
    this.#user();
  }

  /** The whole conversation to send now: the history (written anew) and the messages not sent yet. */
  request(): { messages: ChatCompletionMessageParam[]; tools: ChatCompletionTool[] } {
    const messages = this.#history.map((k): ChatCompletionMessageParam => {
      if (k.role === 'assistant') return this.#echo(k.reply);
      return this.#b.reserialise ? (shuffleKeys(this.#rng, k.msg) as ChatCompletionMessageParam) : k.msg;
    });
    for (const k of this.#history.slice(this.#sent)) {
      if (k.role === 'assistant') continue;
      this.distinctMessages++;
      this.distinctBytes += Buffer.byteLength(JSON.stringify(k.msg));
    }
    this.#sent = this.#history.length;
    const tools = this.#b.reserialise ? (shuffleKeys(this.#rng, shuffled(this.#rng, AGENT_TOOLS)) as ChatCompletionTool[]) : AGENT_TOOLS;
    return { messages, tools };
  }

  /** Keep the reply as received, then answer its calls (or speak again) for the next request. */
  receive(reply: Received): void {
    this.#history.push({ role: 'assistant', reply });
    this.#step++;
    if (reply.toolCalls.length === 0) {
      this.#round = 0;
      this.#user();
      return;
    }
    this.#round++;
    reply.toolCalls.forEach((call, i) => {
      const last = i === reply.toolCalls.length - 1;
      const bytes = Math.round(this.#b.resultBytes * (0.5 + this.#rng()));
      let content = fileRead(this.#rng, bytes, `${call.function.name}_${this.#step}_${i}`, this.#b.unicode);
      if (this.#rng() < this.#b.credentialRate) {
        // At a line start somewhere in the output, as a file or a log holds it.
        const at = content.indexOf('\n', Math.floor(content.length * this.#rng())) + 1;
        content = `${content.slice(0, at)}${this.credentials.inToolOutput(this.#rng)}${content.slice(at)}`;
      }
      this.#keep({ role: 'tool', tool_call_id: call.id, content: last ? `${content}${this.#next()}` : content });
    });
  }

  #user(): void {
    const b = this.#b;
    let text = `${this.#tag} step ${this.#step}: ${phrase(this.#rng, int(this.#rng, 5, 30), b.unicode)}`;
    if (this.#rng() < b.userCredentialRate) text += `\n${this.credentials.inUserText(this.#rng)}`;
    text += `\n${this.#next()}`;
    if (this.#rng() < b.imageRate) {
      const url = pngDataUrl(int(this.#rng, 64, 900), int(this.#rng, 64, 900), `${this.#tag}-${this.#step}`);
      this.#keep({ role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url } }] });
    } else {
      this.#keep({ role: 'user', content: text });
    }
  }

  /** The directives for the next reply: 1 to maxParallel calls, or a text answer that ends the turn. */
  #next(): string {
    const slow = this.#b.slowMs === undefined ? '' : `[[slow ${this.#b.slowMs}]]`;
    if (this.#round >= this.#b.roundsPerTurn) return `[[say Done with step ${this.#step}: ${phrase(this.#rng, 8, this.#b.unicode)}]]${slow}`;
    const count = int(this.#rng, 1, this.#b.maxParallel);
    let out = slow;
    for (let k = 0; k < count; k++) {
      const tool = pick(this.#rng, TOOL_NAMES);
      out += `[[call ${tool} ${JSON.stringify(callArguments(this.#rng, tool, `s${this.#step}k${k}`, this.#b.unicode))}]]`;
    }
    return out;
  }

  /** An earlier reply as this client writes it back this time. */
  #echo(reply: Received): ChatCompletionMessageParam {
    const rng = this.#rng;
    const calls = reply.toolCalls.map((c) => ({
      id: c.id, type: 'function' as const,
      function: { name: c.function.name, arguments: this.#b.reserialise ? reserialise(rng, JSON.parse(c.function.arguments)) : c.function.arguments },
    }));
    const msg: Record<string, unknown> = { role: 'assistant', content: reply.content ?? (rng() < 0.5 ? null : '') };
    if (calls.length > 0) msg.tool_calls = calls;
    if (reply.reasoning !== '' && rng() >= this.#b.dropReasoning) msg.reasoning_content = reply.reasoning;
    return (this.#b.reserialise ? shuffleKeys(rng, msg) : msg) as ChatCompletionMessageParam;
  }

  #keep(msg: ChatCompletionMessageParam): void {
    this.#history.push({ role: msg.role as 'system' | 'user' | 'tool', msg });
  }
}
