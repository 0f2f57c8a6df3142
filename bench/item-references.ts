/**
 * What a Responses body that names its earlier replies by `item_reference` (the Vercel AI SDK's
 * `openai(model)`, `store` true) costs to read, against the same conversation sent whole (`store`
 * false): the references put in from the replies (src/dialects/openai-responses/item-references.ts,
 * the lookup answering from memory as a live session's view does) and the body checked and
 * converted, against the whole body checked and converted. A tool loop of N steps, each reply a
 * short text and one call. In one process, interleaved rounds, medians of CPU per body.
 * docs/decisions/0028-item-references-read-from-the-log.md.
 */
import { resolveItemReferences } from '../src/dialects/openai-responses/item-references.js';
import { openaiResponsesInbound } from '../src/dialects/openai-responses/inbound.js';
import type { AssistantMessage } from '../src/core/types.js';
import type { Line } from './session-sections.js';
import { median } from './stats.js';

const SESSION = '20261207T103104Z-85dd1de7';
const ROUNDS = 9;
const REPEATS = 20;

interface Load {
  steps: number;
  replies: Map<number, AssistantMessage>;
  /** The conversation with each reply's text by reference, calls and results inline. */
  referenced: Buffer;
  /** The same, every item inline. */
  whole: Buffer;
}

function load(steps: number): Load {
  const replies = new Map<number, AssistantMessage>();
  const user = { role: 'user', content: 'Read the loader and fix the failing test.' };
  const referenced: unknown[] = [user];
  const whole: unknown[] = [user];
  for (let i = 0; i < steps; i++) {
    const seq = 4 + 3 * i;
    const call = { id: `call_${i}`, name: 'read_file', arguments: `{"path":"src/file${i}.ts"}` };
    const content = `Reading src/file${i}.ts to see where the loader is called. `.repeat(3);
    replies.set(seq, { role: 'assistant', content, tool_calls: [call] });
    const fc = { type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments };
    const out = { type: 'function_call_output', call_id: call.id, output: `export function f${i}() { return load("${i}"); }\n`.repeat(10) };
    referenced.push({ type: 'item_reference', id: `msg_${SESSION}_${seq}_1` }, fc, out);
    whole.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: content }] }, fc, out);
  }
  const body = (input: unknown[]) => Buffer.from(JSON.stringify({ model: 'gpt-5', input, store: true }));
  return { steps, replies, referenced: body(referenced), whole: body(whole) };
}

function noImages(): never {
  throw new Error('no images in this load');
}

/** CPU µs per body: JSON.parse, then `read` (which may resolve references first), REPEATS times. */
async function timePass(body: Buffer, read: (parsed: unknown) => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let r = 0; r < REPEATS; r++) await read(JSON.parse(body.toString('utf8')));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REPEATS;
}

export async function itemReferencesSection(line: Line): Promise<boolean> {
  line('## Item references: a Responses body that names its earlier replies, against the same body sent whole');
  line('');
  line('A tool loop of N steps in the Responses wire, each reply a short text and one call: sent as the Vercel AI SDK sends it with');
  line('`store` true (each reply\'s text an `item_reference`, calls and results inline) and with `store` false (every item inline).');
  line('Each body JSON.parsed, then read as the proxy reads it: the references put in from the replies (the lookup answering from');
  line(`memory, as a live session's view does), then checked and converted. ${ROUNDS} interleaved rounds in one process, each body ${REPEATS}`);
  line('times a round, medians of CPU per body.');
  line('');
  line('| steps | references | body with references (KB) | body whole (KB) | read with references (µs) | read whole (µs) | references vs whole | per reference (µs) |');
  line('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const steps of [10, 100, 1000]) {
    const l = load(steps);
    const replies = async (_session: string, seqs: ReadonlySet<number>) => new Map([...l.replies].filter(([seq]) => seqs.has(seq)));
    const withRefs: number[] = [];
    const whole: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ways: [number[], () => Promise<number>][] = [
        [withRefs, () => timePass(l.referenced, async (p) => openaiResponsesInbound.parse(await resolveItemReferences(p, replies), noImages))],
        [whole, () => timePass(l.whole, async (p) => openaiResponsesInbound.parse(p, noImages))],
      ];
      for (const [into, run] of round % 2 === 0 ? ways : ways.reverse()) into.push(await run());
    }
    const a = median(withRefs);
    const b = median(whole);
    line(`| ${steps} | ${steps} | ${(l.referenced.length / 1024).toFixed(0)} | ${(l.whole.length / 1024).toFixed(0)} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)}x | ${((a - b) / steps).toFixed(2)} |`);
  }
  line('');
  return true;
}
