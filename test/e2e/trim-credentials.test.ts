/**
 * A long coding session on a small Anthropic route (40K context, thinking on, top-level
 * cache_control), driven by a client that behaves like a real one: about one tool result in ten
 * holds a credential, which the log redacts while the client keeps sending the original. The
 * session must stay one append-only conversation: no client.rewrite, prefix breaks only where the
 * window trims (once per high-water crossing), the cache reading what the unchanged prefix allows
 * (measured on the wire with the simulator's own rendering), every signed thinking block accepted,
 * every request replayable. The same session without credentials is the control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { AgentClient, REAL_CLIENT } from './agent-client.js';
import { breaks, drive, filesWith, leakedCredentials, llmReqs, logSize, readLogFiles, type Driven, type LogFile } from './agent-session.js';
import { replayAll } from './harness.js';
import { prefixSteps, renderAnthropic, type PrefixStep } from './wire-prefix.js';
import { startWiresWorld, wire, type WireExchange, type WiresWorld } from './wires-world.js';

const REQUESTS = 120;

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.claude-40k]
provider = "an"
model = "claude-sim"
thinking = "enabled"
cache_control = "ephemeral"
context = 40000
output_reserve = 4000
`,
  });
});
afterAll(async () => {
  await w?.close();
});

interface Run {
  agent: AgentClient;
  driven: Driven;
  files: LogFile[];
  events: LogEvent[];
  wire: WireExchange[];
  steps: PrefixStep[];
  simStatus: number[];
}

async function session(name: string, credentialRate: number, seed: number): Promise<Run> {
  // A fixed tag (no pid, no counter): the same bytes, so the same trims and figures, on every run.
  const t = `trim-credentials-${name}-${seed}`;
  const agent = new AgentClient(seed, t, { ...REAL_CLIENT, credentialRate, userCredentialRate: credentialRate });
  const fromTap = w.tap.requests.length;
  const fromSim = w.sim.anthropicRequests.length;
  const driven = await drive(w, 'claude-40k', agent, { requests: REQUESTS });
  const files = filesWith(await readLogFiles(w), t);
  const exchanges = wire(w, '/anthropic/', fromTap);
  return {
    agent, driven, files, events: files[0]?.lines.map((l) => l.event) ?? [], wire: exchanges,
    steps: prefixSteps(exchanges.map(renderAnthropic)),
    simStatus: w.sim.anthropicRequests.slice(fromSim).map((r) => r.status),
  };
}

describe.each([
  { name: 'credentials in one tool result in ten', rate: 0.1, seed: 4101 },
  { name: 'no credentials (control)', rate: 0, seed: 4101 },
])('120 requests on a 40K Anthropic route: $name', ({ name, rate, seed }) => {
  let run: Run;
  // About 15 s alone; the margin is for a loaded machine and for a log that grows quadratically
  // (what these tests catch).
  beforeAll(async () => {
    run = await session(name.split(' ')[0]!, rate, seed);
  }, 120_000);

  it('every request was answered; the session is one log without client.rewrite', () => {
    expect(run.driven.failed).toBeUndefined();
    expect(run.driven.answers).toHaveLength(REQUESTS);
    if (rate > 0) expect(run.agent.credentials.planted.length).toBeGreaterThanOrEqual(8);
    const size = logSize(run.files, run.agent);
    const figures = JSON.stringify({ ...size, files: run.files.length, distinct: run.agent.distinctMessages });
    expect({ files: run.files.length, rewrites: size.rewrites }, figures).toEqual({ files: 1, rewrites: 0 });
    // Each message the client wrote is logged once: the log grows with the conversation.
    expect(size.clientMsgs, figures).toBeLessThanOrEqual(run.agent.distinctMessages);
    expect(size.ratio, figures).toBeLessThanOrEqual(1.2);
  });

  it('no credential the client sent reached the log', async () => {
    expect(await leakedCredentials(w, run.agent)).toEqual([]);
  });

  it('prefix breaks are first, none or trim; a trim only where the window elided, one per high-water crossing', () => {
    const reqs = llmReqs(run.events);
    expect(reqs).toHaveLength(REQUESTS);
    expect(reqs[0]!.cause).toBe('first');
    const b = breaks(reqs);
    const summary = `crossings ${b.crossings.length} (${b.crossings.slice(0, 12).join(', ')}), trims ${JSON.stringify(b.trims)}, min gap ${b.minGap}`;
    expect(b.unexpected, summary).toEqual({});
    // A small route: the session crosses high water several times, and each crossing is one trim
    // (the wire agrees: new elision markers exactly there).
    expect(b.crossings.length, summary).toBeGreaterThanOrEqual(3);
    expect(b.trims, summary).toEqual(b.crossings);
    expect(run.steps.map((s, i) => (s.trimmed ? i : -1)).filter((i) => i >= 0)).toEqual(b.crossings);
    // Hysteresis: after a trim to low water, high water is some way off (30% of the window is
    // about a dozen requests of this session), so crossings cannot follow each other closely.
    expect(b.minGap, summary).toBeGreaterThanOrEqual(5);
  });

  it('the cache reads at least 95% of what the unchanged prefix allows', () => {
    const read = run.driven.answers.map((a) => a.usage?.prompt_tokens_details?.cached_tokens ?? 0);
    // The simulator's prompt, as the client saw it, is the wire request as the simulator renders it.
    expect(run.driven.answers.map((a) => a.usage?.prompt_tokens)).toEqual(run.steps.map((s) => s.prompt));
    const ideal = run.steps.reduce((n, s) => n + s.ideal, 0);
    // The message key changes only where a trim forced it: thinking off inside the tool loop whose
    // signed block the trim made stale, and on again at the next user message (docs/how-it-works.md).
    const keyChanges = run.steps.filter((s) => s.keyChanged).length;
    const trims = run.steps.filter((s) => s.trimmed).length;
    expect(keyChanges, `key changes ${keyChanges}, trims ${trims}`).toBeLessThanOrEqual(2 * trims);
    const got = read.reduce((n, x) => n + x, 0);
    // Requests that read less than 90% of their ideal, for the failure message.
    const short = run.steps.map((s, i) => (s.ideal > 0 && read[i]! < s.ideal * 0.9 ? `#${i} ${read[i]}/${s.ideal}` : '')).filter((x) => x !== '');
    expect(got / ideal, `read ${got} of ${ideal}; short: ${short.length} (${short.slice(0, 8).join(', ')})`).toBeGreaterThanOrEqual(0.95);
  });

  it('every signed thinking block was accepted: no upstream 400', () => {
    expect(run.simStatus.filter((s) => s !== 200)).toEqual([]);
    expect(run.wire.map((x) => x.status).filter((s) => s !== 200)).toEqual([]);
    // Thinking was on: most requests sent earlier blocks back, and the simulator checked each.
    const turns = (x: WireExchange) => x.body.messages as { role: string; content: { type: string }[] }[];
    const withBlocks = run.wire.filter((x) => turns(x).some((m) => m.role === 'assistant' && m.content[0]?.type === 'thinking'));
    expect(withBlocks.length).toBeGreaterThan(REQUESTS / 2);
  });
});

it('proxy replay --all passes over every session', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
