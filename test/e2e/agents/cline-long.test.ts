/**
 * The real Cline CLI (pinned in package.json), headless and offline, through the proxy: 42 tool
 * steps that each read a ~6 KB file, on a route whose window trims several times (long-session.ts
 * has the workspace, the spawn and the measures). Cline reaches an OpenAI-compatible base URL by
 * Chat Completions, with no session id, and keeps each call's arguments as a value: a model's
 * arguments that are not JSON come back repaired, which the second run has the model do every step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTS, figureLine, finished, longSession, longSessionSuite, replay, startLongWorld, upstreamUsage, type AgentSpec, type LongRun, type LongWorld } from './long-session.js';
import type { TappedRequest } from '../harness.js';
import { cacheableTokens } from '../wire-prefix.js';
import { sseData } from '../wires-world.js';

longSessionSuite('cline');

// Told the model's context window (as a user who fills in the model's details does), Cline asks for
// `max_tokens` = what the window has left, lower every request, and past 90% of it compacts its
// history itself: it asks for a summary apart (a request of its own, the transcript as text), then
// sends the summary as the first user message and its newest turns after it. Every compaction is
// the client's rewrite of its history from that first message: what follows is new to the cache
// whatever the proxy does. The checks are the suite's, with the compactions in their place.
describe('cline told a 40K context window: max_tokens falls every request, and it compacts its history itself', () => {
  const spec = AGENTS.cline;
  const steps = 42;
  let lw: LongWorld | undefined;
  let r: LongRun;
  /** Requests (index among the conversation's) whose history Cline compacted since the request before. */
  let compacted: number[];
  let summaries: TappedRequest[];

  beforeAll(async () => {
    lw = await startLongWorld(spec);
    r = await longSession(lw, spec, { steps, settings: { contextWindow: 40_000 } });
    console.log(`[long-session] ${figureLine(r.figures)}`);
    const firstUser = (x: TappedRequest): string => String((x.body as { messages: { content: unknown }[] }).messages[1]?.content ?? '');
    compacted = r.upstream.map((x, i) => (i > 0 && firstUser(x) !== firstUser(r.upstream[i - 1]!) ? i : -1)).filter((i) => i >= 0);
    summaries = r.allUpstream.filter((x) => !Array.isArray(x.body?.tools) && JSON.stringify(x.body).includes('Summarize this session'));
  }, 300_000);
  afterAll(async () => {
    await lw?.close();
  });

  it('completes: exit 0, the last step\'s answer, each file whole upstream, nothing refused', () => {
    expect(r.run.code, r.run.stderr.slice(-1500)).toBe(0);
    expect(finished(r)).toBe(true);
    expect(r.unseen).toEqual([]);
    expect(r.reqs).toHaveLength(r.upstream.length);
    expect(r.world.tap.requests.every((x) => x.status === 200), JSON.stringify(r.world.tap.requests.map((x) => x.status))).toBe(true);
  });

  it('compacted more than once, each time from a summary the model wrote as text, asked in a session of its own', () => {
    expect(compacted.length, figureLine(r.figures)).toBeGreaterThanOrEqual(2);
    for (const i of compacted) expect(String((r.upstream[i]!.body as { messages: { content: unknown }[] }).messages[1]!.content)).toMatch(/^Context summary:/);
    expect(summaries.length).toBeGreaterThanOrEqual(compacted.length);
    for (const x of summaries) expect(x.response).not.toContain('tool_calls');
    expect(r.files).toHaveLength(1 + summaries.length);
    expect(r.events.filter((e) => e.type === 'client.rewrite')).toHaveLength(compacted.length);
  });

  it('breaks the prefix only at the window\'s trims and at Cline\'s compactions, nowhere else (llm.req cause)', () => {
    const expected = new Map<number, string>([...r.figures.trims.map((i) => [i, 'trim'] as const), ...compacted.map((i) => [i, 'client_rewrite'] as const)]);
    expect(r.figures.breaks.map((b) => `${b.at}:${b.cause}`)).toEqual([...expected.entries()].sort((a, b) => a[0] - b[0]).map(([i, c]) => `${i}:${c}`));
  });

  it('reads the head from the cache at every compaction and trim, and all the unchanged prefix allows everywhere else', () => {
    const read = r.upstream.map((x) => upstreamUsage(spec.wire, x)?.cached ?? 0);
    const cut = new Set([...r.figures.trims, ...compacted]);
    r.steps.forEach((s, i) => {
      if (i === 0) return;
      const head = cacheableTokens(r.rendered[i]!.headBytes);
      if (cut.has(i)) expect(read[i], `request ${i}: head ${head}`).toBeGreaterThanOrEqual(0.9 * head);
      else expect(read[i], `request ${i}: allowed ${s.ideal}`).toBeGreaterThanOrEqual(0.99 * s.ideal);
    });
  });

  it('sent a falling max_tokens that reached the upstream, and no break for it', () => {
    const limits = r.asked.filter((x) => Array.isArray(x.body?.tools)).map((x) => x.body.max_tokens as number | undefined).filter((m) => m !== undefined);
    expect(limits.length).toBeGreaterThanOrEqual(10);
    expect(r.reqs.filter((q) => q.params.max_tokens !== undefined && q.params.max_tokens < 8_000).length).toBeGreaterThanOrEqual(3);
    expect(r.figures.breaks.filter((b) => b.cause === 'params')).toEqual([]);
  });

  it('proxy replay --all passes', async () => {
    const result = await replay(lw!);
    expect(result.code, result.stderr + result.stdout.slice(0, 2000)).toBe(0);
  }, 60_000);
});

describe('cline, a model that writes its arguments as a JavaScript object (not JSON), every step', () => {
  // `{files:[{path:"..."}]}`: what the simulator replies as written, as a small model may.
  const spec: AgentSpec = { ...AGENTS.cline, readCall: (file) => `[[call read_files {files:[{path:${JSON.stringify(file)}}]}]]` };
  const steps = 8;
  let lw: LongWorld | undefined;
  let r: LongRun;

  beforeAll(async () => {
    lw = await startLongWorld(spec);
    r = await longSession(lw, spec, { steps, timeoutMs: 120_000 });
    console.log(`[cline-repaired] ${r.files.length} logs, ${r.figures.allLogBytes} B in all, the longest ${r.figures.logBytes} B`);
  }, 150_000);
  afterAll(async () => {
    await lw?.close();
  });

  it('completes, each step read by Cline from the arguments it repaired', () => {
    expect(r.run.code, r.run.stderr.slice(-1500)).toBe(0);
    expect(finished(r)).toBe(true);
    expect(r.unseen).toEqual([]);
    // What Cline sent back: every earlier reply's arguments as JSON, not as the model wrote them.
    const last = r.asked.at(-1)!.body as { messages: { role: string; tool_calls?: { function: { arguments: string } }[] }[] };
    const sentArgs = last.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.arguments);
    expect(sentArgs).toHaveLength(steps);
    for (const a of sentArgs) expect(() => JSON.parse(a) as unknown, a).not.toThrow();
  });

  it('stays one session: one log, every request in it, no rewrite and no fork (the log grows by what each step adds)', () => {
    expect(r.files.map((f) => f.bytes)).toEqual([r.figures.logBytes]);
    expect(r.reqs).toHaveLength(steps + 1);
    expect(r.events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
    expect(r.events.filter((e) => e.type === 'session.start')).toHaveLength(1);
  });

  it('sends upstream each reply as the model wrote it, so each request holds its predecessor whole', () => {
    const upstreamArgs = (r.upstream.at(-1)!.body as { messages: { tool_calls?: { function: { arguments: string } }[] }[] }).messages
      .flatMap((m) => m.tool_calls ?? []).map((c) => c.function.arguments);
    expect(upstreamArgs).toHaveLength(steps);
    // As the simulator made them (not JSON: `{files:[{path:\"...\"}]}`, the quotes as the file
    // arrived in Cline's JSON-encoded tool result), none as Cline repaired them.
    const made = r.upstream.slice(0, -1).map((x) => sseData(x.response)
      .flatMap((p) => (p.choices as { delta?: { tool_calls?: { function?: { arguments?: string } }[] } }[] | undefined) ?? [])
      .flatMap((c) => c.delta?.tool_calls ?? []).map((t) => t.function?.arguments ?? '').join(''));
    expect(upstreamArgs).toEqual(made);
    for (const a of upstreamArgs) expect(a).toMatch(/^\{files:/);
    // On the upstream wire, in the simulator's own rendering: every request after the first
    // read all its predecessor's unchanged prefix allows.
    expect(r.figures.renderMismatch).toBe(0);
    expect(r.figures.efficiency, `read ${r.figures.read} of ${r.figures.ideal}`).toBeGreaterThanOrEqual(0.99);
    expect(r.steps.slice(1).every((s) => !s.trimmed)).toBe(true);
  });

  it('proxy replay --all passes', async () => {
    const result = await replay(lw!);
    expect(result.code, result.stderr + result.stdout.slice(0, 2000)).toBe(0);
  }, 60_000);
});
