/**
 * What parsing a client body costs with its head kept (src/proxy/head-memo.ts) against
 * JSON.parse of the whole body, for the shapes real agents send: Claude Code's (system and tools
 * after the list), Codex's (instructions as the list's first item, tools and a per-conversation
 * key after it, client_metadata new on every request), a chat agent's (tools before the list, the
 * system prompt its first message), and a conversation with no head worth keeping (what the
 * memo costs where it cannot help). In one process, interleaved rounds, medians: µs per body.
 * docs/decisions/0016-a-clients-head-parsed-once.md.
 */
import { HeadMemo } from '../src/proxy/head-memo.js';
import { AGENT_HEAD } from './peers/agent-driver.js';
import type { Line } from './session-sections.js';
import { median } from './stats.js';

const CONVERSATIONS = 4;
const TURNS = 24;
const ROUNDS = 9;
/** Each body is parsed this many times a round, so a round is long enough to time. */
const REPEATS = 4;

interface Load {
  name: string;
  listKey: string;
  /** Every body, conversations interleaved as a client with sub-agents sends them. */
  bodies: Buffer[];
}

function turnText(c: number, t: number): string {
  return `Turn ${t} of conversation ${c}: ${'read the file, change the function, run the tests. '.repeat(36)}`;
}

function interleaved(make: (c: number, t: number) => string): Buffer[] {
  const bodies: Buffer[] = [];
  for (let t = 0; t < TURNS; t++) for (let c = 0; c < CONVERSATIONS; c++) bodies.push(Buffer.from(make(c, t)));
  return bodies;
}

function loads(): Load[] {
  const anthropicTools = AGENT_HEAD.toolList.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
  const responsesTools = AGENT_HEAD.toolList.map((t) => ({ type: 'function', ...t }));
  const turns = (c: number, t: number) => Array.from({ length: t + 1 }, (_, k) => [{ role: 'user', content: turnText(c, k) }, { role: 'assistant', content: `Done with turn ${k}.` }]).flat();
  return [
    {
      name: "Claude Code's shape (Anthropic messages: system and tools after the list)",
      listKey: 'messages',
      bodies: interleaved((c, t) => JSON.stringify({ model: 'claude', messages: turns(c, t), system: [{ type: 'text', text: AGENT_HEAD.systemText }], tools: anthropicTools, metadata: { user_id: 'user-1' }, max_tokens: 32000, stream: true })),
    },
    {
      name: "Codex's shape (Responses: instructions first in the list; tools, a key per conversation and client_metadata per request after it)",
      listKey: 'input',
      bodies: interleaved((c, t) => JSON.stringify({ model: 'gpt', stream: true, input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: AGENT_HEAD.systemText }] }, ...turns(c, t)], tools: responsesTools, tool_choice: 'auto', parallel_tool_calls: false, store: false, prompt_cache_key: `conversation-${c}`, client_metadata: { turn_id: `${c}-${t}` } })),
    },
    {
      name: "A chat agent's shape (tools before the list, the system prompt its first message; the peers bench's agent's head)",
      listKey: 'messages',
      bodies: interleaved((c, t) => `{"model":"m","tools":${AGENT_HEAD.tools},"messages":[${[AGENT_HEAD.system, AGENT_HEAD.context('bench', c), ...turns(c, t).map((m) => JSON.stringify(m))].join(',')}]}`),
    },
    {
      name: 'No head to keep (a one-line system prompt, four small tools: the peers bench\'s (a) and (d))',
      listKey: 'messages',
      bodies: interleaved((c, t) => JSON.stringify({ model: 'm', tools: AGENT_HEAD.toolList.slice(0, 4).map((f) => ({ type: 'function', function: { name: f.name, parameters: f.parameters } })), messages: [{ role: 'system', content: 'You are a careful coding agent.' }, ...turns(c, t)] })),
    },
  ];
}

/** CPU µs per body for one pass over the load. */
function timePass(bodies: readonly Buffer[], parse: (b: Buffer) => unknown): number {
  const start = process.cpuUsage();
  for (let r = 0; r < REPEATS; r++) for (const b of bodies) parse(b);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (bodies.length * REPEATS);
}

export async function headMemoSection(line: Line): Promise<boolean> {
  line("## Head memo: a client's head parsed once");
  line('');
  line(`Client bodies as agents send them, ${CONVERSATIONS} conversations interleaved, ${TURNS} turns each (~2 KB a turn), parsed by JSON.parse`);
  line('(what every body under 256 KB cost before) and by the head memo (src/proxy/head-memo.ts, which the proxy uses for bodies of 8 KB up');
  line(`to 256 KB); ${ROUNDS} interleaved rounds in one process, each body ${REPEATS} times a round, medians of CPU per body. A fresh memo per round for`);
  line('the memo\'s rows: its first bodies are parsed whole and learnt from, as in a fresh process.');
  line('');
  line('| load | bodies | mean body (KB) | JSON.parse (µs) | head memo (µs) | memo vs JSON.parse | heads kept |');
  line('|---|---:|---:|---:|---:|---:|---:|');
  for (const load of loads()) {
    const whole: number[] = [];
    const memo: number[] = [];
    let kept = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const m = new HeadMemo();
      const ways: [number[], (b: Buffer) => unknown][] = [[whole, (b) => JSON.parse(b.toString('utf8'))], [memo, (b) => m.parse(b, load.listKey)]];
      for (const [into, parse] of round % 2 === 0 ? ways : ways.reverse()) into.push(timePass(load.bodies, parse));
      kept = m.size;
      await new Promise((r) => setImmediate(r));
    }
    const kb = load.bodies.reduce((n, b) => n + b.length, 0) / load.bodies.length / 1024;
    line(`| ${load.name} | ${load.bodies.length} | ${kb.toFixed(0)} | ${median(whole).toFixed(1)} | ${median(memo).toFixed(1)} | ${(median(memo) / median(whole)).toFixed(2)}x | ${kept} |`);
  }
  line('');
  return true;
}
