/**
 * An agent's load on each inbound wire, with a coding agent's head and with a small one: what the
 * head and the wire's own shapes cost prefix-proxy per request. Claude Code speaks Anthropic
 * Messages (its text as content blocks), Codex the Responses API (its system prompt a developer
 * item in `input`), most others Chat Completions; the peers bench drives only the last.
 * Part of `npm run bench` (section `wires`); alone: node dist-bench/bench/wires.js [--rounds N] [--baseline CHECKOUT]
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { fileContent } from './agent.js';
import { AGENT_HEAD } from './peers/agent-driver.js';
import { cpuMs } from './peers/proc.js';
import { startTarget, startUpstream, type Target } from './peers/targets.js';
import { median } from './stats.js';

export const WIRES = ['openai-chat', 'anthropic-messages', 'openai-responses'] as const;
type Wire = (typeof WIRES)[number];
type Head = 'small' | 'agent';
type Build = 'prefix-proxy' | 'baseline';

const CONVERSATIONS = 8;
const TURNS = 25;
const TURN_BYTES = 2000;

interface Run {
  cpuPerRequest: number;
  rps: number;
}

/** One conversation's wire-shaped requests: the history as that wire holds it, one user turn added each request. */
class Conversation {
  readonly #wire: Wire;
  readonly #head: Head;
  readonly #items: unknown[];

  constructor(wire: Wire, head: Head, tag: string) {
    this.#wire = wire;
    this.#head = head;
    const first = head === 'agent' ? AGENT_HEAD.contextText(tag, 0) : `${tag}: find the bug.`;
    const system = this.#system();
    this.#items =
      wire === 'anthropic-messages' ? [{ role: 'user', content: [{ type: 'text', text: first }] }]
      : wire === 'openai-responses' ? [textItem('developer', system), textItem('user', first)]
      : [{ role: 'system', content: system }, { role: 'user', content: first }];
  }

  #system(): string {
    return this.#head === 'agent' ? AGENT_HEAD.systemText : 'You are a careful coding agent.';
  }

  path(): string {
    return this.#wire === 'anthropic-messages' ? '/v1/messages' : this.#wire === 'openai-responses' ? '/v1/responses' : '/v1/chat/completions';
  }

  body(model: string): string {
    const tools = this.#head === 'agent' ? AGENT_HEAD.toolList : AGENT_HEAD.toolList.slice(0, 2);
    if (this.#wire === 'anthropic-messages') {
      return JSON.stringify({
        model, max_tokens: 4096,
        system: [{ type: 'text', text: 'x-billing-header: cc_version=1;' }, { type: 'text', text: this.#system(), cache_control: { type: 'ephemeral' } }],
        tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
        messages: this.#items,
      });
    }
    if (this.#wire === 'openai-responses') {
      return JSON.stringify({ model, input: this.#items, tools: tools.map((t) => ({ type: 'function', ...t, strict: false })), store: false });
    }
    return JSON.stringify({ model, messages: this.#items, tools: tools.map((t) => ({ type: 'function', function: t })) });
  }

  /** Takes the reply, then adds the next user turn. */
  next(reply: string, turn: number): void {
    const said = replyText(this.#wire, reply);
    const text = `turn ${turn}: ${fileContent(95, turn, 0, TURN_BYTES)}`;
    if (this.#wire === 'anthropic-messages') {
      this.#items.push({ role: 'assistant', content: [{ type: 'text', text: said }] }, { role: 'user', content: [{ type: 'text', text }] });
    } else if (this.#wire === 'openai-responses') {
      this.#items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: said }] }, textItem('user', text));
    } else {
      this.#items.push({ role: 'assistant', content: said }, { role: 'user', content: text });
    }
  }
}

function textItem(role: string, text: string): unknown {
  return { type: 'message', role, content: [{ type: 'input_text', text }] };
}

function replyText(wire: Wire, reply: string): string {
  const j = JSON.parse(reply) as { content?: { text?: string }[]; output?: { type: string; content?: { text?: string }[] }[]; choices?: { message: { content: string } }[] };
  if (wire === 'anthropic-messages') return (j.content ?? []).map((b) => b.text ?? '').join('');
  if (wire === 'openai-responses') return (j.output ?? []).filter((o) => o.type === 'message').flatMap((o) => (o.content ?? []).map((c) => c.text ?? '')).join('');
  return j.choices![0]!.message.content;
}

async function load(target: Target, wire: Wire, head: Head, tag: string): Promise<number> {
  const pool = new Pool(target.origin, { connections: CONVERSATIONS });
  const headers = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...target.headers };
  try {
    await Promise.all(Array.from({ length: CONVERSATIONS }, async (_, c) => {
      const conversation = new Conversation(wire, head, `${tag}-${c}`);
      for (let turn = 0; turn < TURNS; turn++) {
        const res = await pool.request({ method: 'POST', path: conversation.path(), headers, body: conversation.body(target.model) });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`${target.name} ${wire}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
        conversation.next(text, turn);
      }
    }));
  } finally {
    await pool.close();
  }
  return CONVERSATIONS * TURNS;
}

async function measure(target: Target, wire: Wire, head: Head, tag: string): Promise<Run> {
  await load(target, wire, head, `${tag}-warm`);
  const cpu0 = cpuMs(target.pid);
  const started = performance.now();
  const requests = await load(target, wire, head, tag);
  return { cpuPerRequest: (cpuMs(target.pid) - cpu0) / requests, rps: (1000 * requests) / (performance.now() - started) };
}

export interface WiresOptions {
  rounds?: number;
  /** Another build's `dist/cli/main.js`, measured in the same rounds. */
  baseline?: string;
  log?: (line: string) => void;
}

export type WiresReport = Map<string, Run[]>;

const key = (build: Build, wire: Wire, head: Head) => `${build} ${wire} ${head}`;

export async function measureWires(opts: WiresOptions = {}): Promise<WiresReport> {
  const log = opts.log ?? ((line) => process.stderr.write(`wires: ${line}\n`));
  const builds: Build[] = opts.baseline === undefined ? ['prefix-proxy'] : ['baseline', 'prefix-proxy'];
  const report: WiresReport = new Map();
  for (let round = 0; round < (opts.rounds ?? 3); round++) {
    const upstream = await startUpstream();
    try {
      // The builds alternate first from round to round.
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        for (const wire of WIRES) {
          for (const head of ['small', 'agent'] as const) {
            const target = await startTarget(build, upstream, opts.baseline === undefined ? {} : { baselineMain: opts.baseline });
            try {
              const run = await measure(target, wire, head, `wires-${round}-${build}-${wire}-${head}`);
              const runs = report.get(key(build, wire, head)) ?? [];
              runs.push(run);
              report.set(key(build, wire, head), runs);
              log(`round ${round + 1} ${build} ${wire} ${head} head: ${run.cpuPerRequest.toFixed(3)} ms CPU/req, ${run.rps.toFixed(0)} req/s`);
            } finally {
              await target.stop();
            }
          }
        }
      }
    } finally {
      await upstream.stop();
    }
  }
  return report;
}

export function renderWires(report: WiresReport, started: Date, baselineName?: string): string[] {
  const builds: Build[] = report.has(key('baseline', WIRES[0], 'small')) ? ['baseline', 'prefix-proxy'] : ['prefix-proxy'];
  const med = (build: Build, wire: Wire, head: Head, pick: (r: Run) => number) => median((report.get(key(build, wire, head)) ?? []).map(pick));
  const rounds = report.get(key('prefix-proxy', WIRES[0], 'small'))?.length ?? 0;
  const out = [
    '## Wires: an agent\'s load on each inbound wire, with a coding agent\'s head and with a small one',
    '',
    `Measured ${started.toISOString()} by bench/wires.ts; medians of ${rounds} rounds, each a fresh process per run, warmed by one unmeasured run of the same load.`,
    `${CONVERSATIONS} conversations at once, ${TURNS} requests each, every request the whole history plus a ~${TURN_BYTES / 1000} KB user turn, in the wire's own`,
    'shapes: Chat Completions (strings), Anthropic Messages (text blocks, the system prompt as blocks, as Claude Code sends them),',
    'Responses (input items with text parts, the system prompt as a developer item, as Codex sends it). The agent\'s head is the peers',
    'bench\'s `agent-head` one (a ~16 KB system prompt, 30 tools of ~30 KB, a ~13 KB first message); the small head is a one-line',
    'system prompt and two tools. The upstream is the peers bench\'s fake one (Chat Completions, answers at once); CPU is the proxy',
    'process\'s own, from /proc, over the measured requests.',
    ...(baselineName === undefined ? [] : ['', `"baseline" is \`${baselineName}\`, run in the same rounds.`]),
    '',
    '| build | wire | CPU ms/req, small head | CPU ms/req, agent\'s head | what the head adds | req/s, small head | req/s, agent\'s head |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const wire of WIRES) {
    for (const build of builds) {
      const small = med(build, wire, 'small', (r) => r.cpuPerRequest);
      const agent = med(build, wire, 'agent', (r) => r.cpuPerRequest);
      out.push(`| ${build} | ${wire} | ${small.toFixed(2)} | ${agent.toFixed(2)} | ${(agent - small).toFixed(2)} ms | ${med(build, wire, 'small', (r) => r.rps).toFixed(0)} | ${med(build, wire, 'agent', (r) => r.rps).toFixed(0)} |`);
    }
  }
  out.push('');
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, baseline: { type: 'string' } } });
  const { baselineMain } = await import('./peers.js');
  const started = new Date();
  const report = await measureWires({ ...(values.rounds === undefined ? {} : { rounds: Number(values.rounds) }), ...(values.baseline === undefined ? {} : { baseline: baselineMain(values.baseline) }) });
  process.stdout.write(renderWires(report, started, values.baseline).join('\n') + '\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
