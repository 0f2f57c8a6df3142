/**
 * A coding agent's session as Claude Code shapes it (Read {file_path, offset?, limit?}, Edit,
 * Bash, Grep), through the real loop: it reads the files of its task, edits them, reads them
 * again, reads parts of long ones in ranges, runs the tests until they pass, and sometimes fails
 * (an Edit whose old_string is not in the file, a Read of a path that does not exist, failing
 * tests) and tries again. Every few rounds the user asks for the next task, on other files.
 *
 * The agent's calls come from its own seeded generator, never from what the window sent, so the
 * same seed is the same trace under any recipe: what differs is only what the window makes of it
 * (docs/decisions.md, Folds and per-tool caps). Used by the fold tests and the benchmark.
 */
import { canonicalJson } from '../../src/core/canonical.js';
import { estimateMessageTokens, estimateTextTokens } from '../../src/core/estimate.js';
import type { EventBody, LogEvent, Recipe } from '../../src/core/events.js';
import type { NeutralMessage, ToolCall, ToolSpec } from '../../src/core/types.js';
import { WindowState, type WindowInput } from '../../src/window/index.js';
import type { GeneratedSession } from './gen-session.js';
import { ORIGIN_A, ROUTE, smallRecipe } from './gen-session.js';
import { mulberry32, sentence, type Rng } from './gen-text.js';

export const AGENT_TOOLS: ToolSpec[] = [
  { type: 'function', function: { name: 'Read', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } }, required: ['file_path'] } } },
  { type: 'function', function: { name: 'Edit', description: 'Replace text in a file', parameters: { type: 'object', properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' } } } } },
  { type: 'function', function: { name: 'Bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } },
  { type: 'function', function: { name: 'Grep', description: 'Search files', parameters: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' } } } } },
];

export interface TraceOptions {
  /** Tool rounds (one request each). */
  rounds: number;
  recipe: Partial<Recipe>;
  seed?: number;
  /** A new task from the user every this many rounds. */
  taskRounds?: number;
}

export interface TraceFigures {
  requests: number;
  /** Estimated prompt tokens of every request, summed. */
  sent: number;
  /** Of those, the ones in the prefix each request shares with the one before it (what a prefix cache reads). */
  cached: number;
  /** Requests whose prefix is not the whole of the previous request's. */
  breaks: number;
  trims: number;
  folds: number;
  /** Requests that folded. */
  foldingRequests: number;
}

interface File {
  path: string;
  lines: number;
  version: number;
}

export function runAgentTrace(opts: TraceOptions): GeneratedSession {
  const rng = mulberry32(opts.seed ?? 1);
  const recipe = smallRecipe(opts.recipe);
  const state = new WindowState();
  const events: LogEvent[] = [];
  const requests: GeneratedSession['requests'] = [];
  const input: WindowInput = { route: ROUTE, model: ORIGIN_A.model, origin: ORIGIN_A, params: {} };
  let seq = 0;
  let calls = 0;
  const emit = (body: EventBody): LogEvent => {
    const event = { ...body, seq: ++seq, ts: new Date(Date.UTC(2026, 10, 1) + seq * 1000).toISOString() } as LogEvent;
    events.push(event);
    state.apply(event);
    return event;
  };
  const files: File[] = Array.from({ length: 30 }, (_, i) => ({ path: `src/${['core', 'window', 'session', 'proxy'][i % 4]}/mod${i}.ts`, lines: 30 + Math.floor(rng() * 400), version: 0 }));
  const agent = new Agent(rng, files);

  emit({ type: 'session.start', recipe, ids: [] });
  emit({ type: 'catalog', tools: AGENT_TOOLS });
  emit({ type: 'client.msg', msg: { role: 'system', content: 'You are a coding agent. Read before you edit; run the tests after.' }, head: true });
  const taskRounds = opts.taskRounds ?? 25;
  for (let round = 0; round < opts.rounds; round++) {
    if (round % taskRounds === 0) {
      agent.newTask();
      emit({ type: 'client.msg', msg: { role: 'user', content: `Next: ${sentence(rng, 10)} (in ${agent.focus.map((f) => f.path).join(', ')})` } });
    }
    const result = state.build(input);
    const req = emit({
      type: 'llm.req', digest: result.digest, recipe_version: recipe.version, route: ROUTE, model: input.model, origin: input.origin,
      params: input.params, elided: result.elided, ...(result.folded.length === 0 ? {} : { folded: result.folded }), est_tokens: result.estTokens,
    });
    requests.push({ seq: req.seq, input, result, partial: false });
    const batch = agent.nextCalls().map(([name, args]) => ({ id: `toolu_${++calls}`, name, arguments: JSON.stringify(args) }) satisfies ToolCall);
    emit({
      type: 'llm.resp', req: req.seq, origin: ORIGIN_A, timings: { total_ms: 50 },
      reply: { content: rng() < 0.6 ? null : sentence(rng, 8), thinking: sentence(rng, 10 + Math.floor(rng() * 20)), tool_calls: batch, finish_reason: 'tool_calls' },
    });
    for (const c of batch) emit({ type: 'client.msg', msg: { role: 'tool', tool_call_id: c.id, content: agent.run(c.name, JSON.parse(c.arguments) as Record<string, unknown>) } });
  }
  return { events, requests };
}

/** What a prefix cache would read of each request: the messages it shares with the request before it. */
export function traceFigures(s: GeneratedSession): TraceFigures {
  const f: TraceFigures = { requests: s.requests.length, sent: 0, cached: 0, breaks: 0, trims: 0, folds: 0, foldingRequests: 0 };
  let prev: { msgs: readonly NeutralMessage[]; tools: string } | undefined;
  for (const { result } of s.requests) {
    const msgs = result.request.messages;
    const tools = canonicalJson(result.request.tools);
    f.sent += result.estTokens;
    if (result.trimmed) f.trims++;
    if (result.folded.length > 0) f.foldingRequests++;
    f.folds += result.folded.length;
    if (prev !== undefined) {
      let n = 0;
      let shared = prev.tools === tools ? estimateTextTokens(tools) : 0;
      while (shared > 0 && n < prev.msgs.length && n < msgs.length && (prev.msgs[n] === msgs[n] || canonicalJson(prev.msgs[n]) === canonicalJson(msgs[n]))) {
        shared += estimateMessageTokens(msgs[n]!);
        n++;
      }
      f.cached += shared;
      if (shared === 0 || n < prev.msgs.length) f.breaks++;
    }
    prev = { msgs, tools };
  }
  return f;
}

/** The agent: a task's files, what it has read of them, and what failed last (to try again). */
class Agent {
  focus: File[] = [];
  #retry: [string, Record<string, unknown>] | undefined;
  #testsFailing = 0;
  #missing: string | undefined;
  /** A file just edited, which the agent reads again to check the edit. */
  #edited: string | undefined;

  constructor(readonly rng: Rng, readonly files: File[]) {}

  newTask(): void {
    const start = Math.floor(this.rng() * this.files.length);
    this.focus = [0, 1, 2, 3].map((k) => this.files[(start + k * 7) % this.files.length]!);
    this.#testsFailing = 1 + Math.floor(this.rng() * 3);
  }

  nextCalls(): [string, Record<string, unknown>][] {
    const r = this.rng;
    if (this.#retry !== undefined) {
      const again = this.#retry;
      this.#retry = undefined;
      return [again];
    }
    const edited = this.#edited;
    this.#edited = undefined;
    if (edited !== undefined && r() < 0.5) return [['Read', { file_path: edited }]];
    const f = this.focus[Math.floor(r() * this.focus.length)]!;
    const roll = r();
    if (roll < 0.45) {
      // Reading, often the same files again after an edit; a long one sometimes in ranges.
      const out: [string, Record<string, unknown>][] = [['Read', { file_path: f.path }]];
      if (r() < 0.4) out.push(['Read', { file_path: this.focus[Math.floor(r() * this.focus.length)]!.path }]);
      if (f.lines > 200 && r() < 0.3) out.push(['Read', { file_path: f.path, offset: 1 + Math.floor(r() * (f.lines - 60)), limit: 60 }]);
      return out;
    }
    if (roll < 0.5) {
      this.#missing = f.path.replace('.ts', '.js');
      return [['Read', { file_path: this.#missing }]];
    }
    if (roll < 0.72) return [['Edit', { file_path: f.path, old_string: sentence(r, 4), new_string: sentence(r, 5) }]];
    if (roll < 0.85) return [['Bash', { command: 'npm test' }]];
    return [['Grep', { pattern: sentence(r, 1).split(' ')[0]!, path: 'src' }]];
  }

  run(name: string, args: Record<string, unknown>): string {
    const r = this.rng;
    const path = args.file_path as string | undefined;
    const file = this.files.find((f) => f.path === path);
    switch (name) {
      case 'Read': {
        if (file === undefined) {
          // The agent finds the real name and reads that instead.
          if (path === this.#missing) this.#retry = ['Read', { file_path: path!.replace('.js', '.ts') }];
          return '<tool_use_error>File does not exist.</tool_use_error>';
        }
        const from = typeof args.offset === 'number' ? args.offset : 1;
        const to = typeof args.limit === 'number' ? Math.min(file.lines, from + args.limit - 1) : file.lines;
        return numbered(file, from, to);
      }
      case 'Edit': {
        if (file !== undefined && r() < 0.2) {
          this.#retry = ['Edit', { ...args, old_string: sentence(r, 3) }];
          return '<tool_use_error>String to replace not found in file.</tool_use_error>';
        }
        if (file !== undefined) {
          this.#edited = file.path;
          file.version++;
          file.lines += Math.floor(r() * 5);
        }
        return `The file ${path} has been updated.`;
      }
      case 'Bash': {
        if (this.#testsFailing > 0) {
          this.#testsFailing--;
          const failing = Array.from({ length: 3 + Math.floor(r() * 8) }, () => `  FAIL test/${sentence(r, 1).split(' ')[0]}.test.ts > ${sentence(r, 6)}\n    AssertionError: ${sentence(r, 8)}`).join('\n');
          return `Exit code 1\n${failing}\n\nTests  ${1 + Math.floor(r() * 9)} failed | 412 passed`;
        }
        return 'Tests  421 passed (421)\nDuration  14.2s';
      }
      default:
        return Array.from({ length: 2 + Math.floor(r() * 10) }, () => `src/${sentence(r, 1).split(' ')[0]}.ts:${1 + Math.floor(r() * 300)}: ${sentence(r, 7)}`).join('\n');
    }
  }
}

/** Lines `from`..`to` of a file, numbered as Claude Code's Read shows them; the text follows the file's version. */
function numbered(file: File, from: number, to: number): string {
  const out: string[] = [];
  for (let i = from; i <= to; i++) {
    const rng = mulberry32(i * 7919 + file.path.length * 31 + file.version * 104729);
    out.push(`${String(i).padStart(6)}\t${' '.repeat(2 * Math.floor(rng() * 4))}${sentence(rng, 3 + Math.floor(rng() * 9))}`);
  }
  return out.join('\n');
}
