/**
 * The credentials session of trim-credentials.test.ts on an OpenRouter route (openai-chat wire,
 * the simulator's openrouter mode, which answers 400 to reasoning_details that changed or outlived
 * their prefix): every earlier reply goes back upstream with its reasoning_details exactly as the
 * simulator streamed them, after tool results with credentials as before them, except a reply made
 * before a later elision (its prefix changed; its thinking text goes instead). Which replies those
 * are is read off the wire, not the log. The same session without credentials is the control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { AgentClient, REAL_CLIENT } from './agent-client.js';
import { breaks, drive, filesWith, leakedCredentials, llmReqs, logSize, readLogFiles, type Driven, type LogFile } from './agent-session.js';
import type { WireMessage } from '../../src/sim/request.js';
import { prefixDigests } from '../../src/sim/tokens.js';
import { replayAll } from './harness.js';
import { exchanges, sseData, startReasoningWorld, type Exchange, type ReasoningWorld, type WireAssistant } from './reasoning-world.js';

const REQUESTS = 120;

let w: ReasoningWorld;
beforeAll(async () => {
  w = await startReasoningWorld(`
[models.or-40k]
provider = "or"
model = "meta/muse-spark-1.3"
context = 40000
output_reserve = 4000
`, { requireReasoning: true });
});
afterAll(async () => {
  await w?.close();
});

/** A reply as the simulator streamed it: its key (first call id, or its text) and its details merged by index. */
interface Streamed {
  key: string;
  details: Record<string, unknown>[];
}

/** Merged as OpenRouter documents it: fragments of one `index` are one item, text fields joined, others the latest non-null. */
function streamed(ex: Exchange): Streamed {
  const details: Record<string, unknown>[] = [];
  let content = '';
  let firstCall = '';
  for (const payload of sseData(ex.response)) {
    const delta = (payload.choices as { delta?: Record<string, unknown> }[] | undefined)?.[0]?.delta;
    if (delta === undefined) continue;
    content += typeof delta.content === 'string' ? delta.content : '';
    firstCall ||= (delta.tool_calls as { id?: string }[] | undefined)?.[0]?.id ?? '';
    for (const frag of (delta.reasoning_details as Record<string, unknown>[] | undefined) ?? []) {
      const item = details.find((d) => d.index === frag.index);
      if (item === undefined) details.push({ ...frag });
      else {
        for (const [k, v] of Object.entries(frag)) {
          if ((k === 'text' || k === 'data' || k === 'summary') && typeof v === 'string') item[k] = `${String(item[k] ?? '')}${v}`;
          else if (v !== null) item[k] = v;
        }
      }
    }
  }
  return { key: firstCall !== '' ? firstCall : `text:${content}`, details };
}

const isElided = (m: { content: unknown }): boolean => typeof m.content === 'string' && m.content.startsWith('[elided seq=');

interface Carried {
  /** Earlier replies sent back with their details unchanged. */
  kept: number;
  /** ... sent back without them, correctly: what came before them changed (a trim); their thinking text instead. */
  stale: number;
  /** Earlier replies whose prefix held and whose details did not come back, or came back changed. */
  lost: string[];
}

/**
 * Request k holds reply i (made by request i) as an assistant message. Its details are bound to
 * the prompt it followed, read as the simulator reads it (tokens.ts prefixDigests: tools and
 * messages, reasoning left out): when what stands before it in request k is that prompt, its
 * details must come back unchanged; when not (the window elided something before it), they may
 * not, and its thinking text goes instead.
 */
function carried(wire: readonly Exchange[]): Carried {
  const made = wire.map(streamed);
  const byKey = new Map(made.map((s, i) => [s.key, i]));
  const digests = wire.map((x) => prefixDigests((x.body.tools ?? []) as unknown[], x.body.messages as WireMessage[]));
  const out: Carried = { kept: 0, stale: 0, lost: [] };
  wire.forEach((x, k) => {
    (x.body.messages as WireAssistant[]).forEach((a, p) => {
      if (a.role !== 'assistant' || isElided(a)) return;
      const i = byKey.get(a.tool_calls?.[0]?.id ?? `text:${a.content ?? ''}`);
      if (i === undefined || i >= k) return void out.lost.push(`#${k}: an assistant message no reply made`);
      if (digests[k]![p] !== digests[i]!.at(-1)) {
        if (a.reasoning_details === undefined && (a.reasoning_content ?? '') !== '') out.stale++;
        else out.lost.push(`#${k} reply ${i}: stale, but ${a.reasoning_details === undefined ? 'without its text' : 'with details'}`);
      } else if (JSON.stringify(a.reasoning_details) === JSON.stringify(made[i]!.details)) out.kept++;
      else out.lost.push(`#${k} reply ${i}: ${a.reasoning_details === undefined ? 'no details' : 'details changed'}`);
    });
  });
  return out;
}

interface Run {
  agent: AgentClient;
  driven: Driven;
  files: LogFile[];
  events: LogEvent[];
  wire: Exchange[];
}

describe.each([
  { name: 'credentials in one tool result in ten', rate: 0.1, seed: 5202 },
  { name: 'no credentials (control)', rate: 0, seed: 5202 },
])('120 requests on a 40K OpenRouter route: $name', ({ rate, seed }) => {
  let run: Run;
  // About 12 s alone; the margin is for a loaded machine and for a log that grows quadratically
  // (what these tests catch).
  beforeAll(async () => {
    // A fixed tag (no pid, no counter): the same bytes, so the same trims and figures, on every run.
    const t = `reasoning-credentials-${rate}-${seed}`;
    const agent = new AgentClient(seed, t, { ...REAL_CLIENT, credentialRate: rate, userCredentialRate: rate });
    const from = w.tap.requests.length;
    const driven = await drive(w, 'or-40k', agent, { requests: REQUESTS, headers: { 'x-session-affinity': t } });
    const files = filesWith(await readLogFiles(w), t);
    run = { agent, driven, files, events: files[0]?.lines.map((l) => l.event) ?? [], wire: exchanges(w, 'openrouter', from) };
  }, 120_000);

  it('every request was answered (nothing refused upstream); one log, no client.rewrite, each message logged once', () => {
    expect(run.driven.failed).toBeUndefined();
    expect(run.wire.map((x) => x.status).filter((s) => s !== 200)).toEqual([]);
    const size = logSize(run.files, run.agent);
    const figures = JSON.stringify({ ...size, files: run.files.length, distinct: run.agent.distinctMessages });
    expect({ files: run.files.length, rewrites: size.rewrites }, figures).toEqual({ files: 1, rewrites: 0 });
    expect(size.clientMsgs, figures).toBeLessThanOrEqual(run.agent.distinctMessages);
    expect(size.ratio, figures).toBeLessThanOrEqual(1.2);
  });

  it('every earlier reply goes back with its reasoning_details as the upstream gave them, unless an elision after it made it stale', () => {
    const c = carried(run.wire);
    expect(c.lost, `kept ${c.kept}, stale ${c.stale}, lost ${c.lost.length}`).toEqual([]);
    // Replies since the last trim go back whole (several per request); those before it went stale.
    expect(c.kept).toBeGreaterThan(REQUESTS * 3);
    expect(c.stale).toBeGreaterThan(0);
  });

  it('prefix breaks are first, none or one trim per high-water crossing', () => {
    const reqs = llmReqs(run.events);
    expect(reqs).toHaveLength(REQUESTS);
    const b = breaks(reqs);
    const summary = `crossings ${b.crossings.length} (${b.crossings.slice(0, 12).join(', ')}), trims ${JSON.stringify(b.trims)}, min gap ${b.minGap}`;
    expect(b.unexpected, summary).toEqual({});
    expect(b.crossings.length, summary).toBeGreaterThanOrEqual(2);
    expect(b.trims, summary).toEqual(b.crossings);
    expect(b.minGap, summary).toBeGreaterThanOrEqual(5);
  });

  it('no credential the client sent reached the log', async () => {
    expect(await leakedCredentials(w, run.agent)).toEqual([]);
  });
});

it('proxy replay --all passes over every session', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
