/**
 * The peers bench's workloads. Each run warms its target up, then measures: client-side latency,
 * the target process's own CPU (from /proc) over the measured requests only, its RSS at the end.
 */
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { median, percentile } from '../stats.js';
import { Conversation, drive, grownHistory, type Sample } from './agent-driver.js';
import { cpuMs, rssMb } from './proc.js';
import type { Target } from './targets.js';

export interface RunResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
  rssMb: number;
  /** Figures only one workload has (live sessions: its requests 10 and 1000), by name. */
  extra: Record<string, number>;
}

export const SIZES = {
  /** See warmUp: 2.5 s left both the pipe and prefix-proxy measurably colder than 5 s, 10 s a little warmer still. */
  warmUpMs: 5000,
  /**
   * Unmeasured runs of the measured workload itself after the warm-up (see settle): after the 5 s
   * of short conversations, a target's first run of (a) still cost it ~1.4x its third (the pipe
   * 0.47-0.60 ms per request, then 0.26-0.37; prefix-proxy 1.9-2.0, then 1.3-1.6).
   */
  settleRuns: 2,
  /**
   * 8 at once, each followed by a new one when it ends: 960 measured requests. One round of 8 (320
   * requests) measured a warm pipe for a fifth of a second, some 16 ticks of /proc's CPU clock.
   */
  agent: { concurrency: 8, conversations: 24, turns: 40, turnBytes: 2048 },
  newConversation: { connections: 10, seconds: 3 },
  deep: { results: 4, requests: 10, turnBytes: 2048 },
  live: { conversations: 1000, turns: 4, turnBytes: 25_000 },
};

/** Shrinks every workload to a few seconds, to check the bench itself (figures are not comparable). */
export function quickSizes(): void {
  Object.assign(SIZES.agent, { concurrency: 4, conversations: 4, turns: 8 });
  SIZES.newConversation.seconds = 1;
  SIZES.warmUpMs = 500;
  SIZES.settleRuns = 0;
  SIZES.deep.requests = 3;
  SIZES.live.conversations = 40;
}

export type WorkloadKey = 'agent' | 'agent-stream' | 'agent-head' | 'new-conversation' | 'deep-256k' | 'deep-1m' | 'live-sessions';
export const WORKLOAD_KEYS: WorkloadKey[] = ['agent', 'agent-stream', 'agent-head', 'new-conversation', 'deep-256k', 'deep-1m', 'live-sessions'];

/**
 * Agent load for `SIZES.warmUpMs` before measuring, so every target is measured warm: the same time
 * for each, whatever its speed. A fresh process's JIT compiles its hot path for seconds, much of it
 * on V8's worker threads, whose CPU the figures count: after the 24 requests this warm-up used to be,
 * the pipe spent 1.9 ms per request of (a) against 0.5 ms after 10 s, and prefix-proxy's worker
 * threads 0.6 ms per request of (b) against 0.15 ms.
 */
async function warmUp(target: Target, tag: string, stream: boolean): Promise<void> {
  const until = performance.now() + SIZES.warmUpMs;
  for (let round = 0; performance.now() < until; round++) {
    await drive(target, { concurrency: 4, conversations: 4, turns: 6, turnBytes: () => 2048, stream, tag: `${tag}-warm${round}` });
  }
}

/**
 * The workload's own requests, unmeasured, `SIZES.settleRuns` times (other conversations, the same
 * shapes): the warm-up's short conversations do not reach the code and heap sizes of long ones
 * (~84 KB bodies), and each target is measured where its CPU per request has settled
 * (docs/decisions.md, Peers measured warm).
 */
async function settle(tag: string, run: (tag: string) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < SIZES.settleRuns; i++) await run(`${tag}-settle${i}`);
}

function fromSamples(target: Target, samples: readonly Sample[], wallMs: number, cpu: number): RunResult {
  const ms = samples.map((s) => s.ms);
  return {
    requests: ms.length,
    rps: (1000 * ms.length) / wallMs,
    p50: median(ms),
    p99: percentile(ms, 99),
    cpuPerRequest: cpu / ms.length,
    rssMb: rssMb(target.pid),
    extra: {},
  };
}

/** (a) 8 conversations at once, each request the history plus a ~2 KB user turn, 40 turns each. */
export async function agentLoad(target: Target, tag: string, stream: boolean, head: 'small' | 'agent' = 'small'): Promise<RunResult> {
  await warmUp(target, tag, stream);
  const { concurrency, conversations, turns, turnBytes } = SIZES.agent;
  const load = (t: string) => drive(target, { concurrency, conversations, turns, turnBytes: () => turnBytes, stream, tag: t, head });
  await settle(tag, load);
  const cpu0 = cpuMs(target.pid);
  const run = await load(tag);
  return fromSamples(target, run.samples, run.wallMs, cpuMs(target.pid) - cpu0);
}

/** (b) autocannon, every request a new one-message conversation with a unique user message. */
export async function newConversationLoad(target: Target, tag: string): Promise<RunResult> {
  await warmUp(target, tag, false);
  let n = 0;
  const options = (extra: { amount?: number; duration?: number }) => ({
    url: target.origin + target.path,
    method: 'POST',
    connections: SIZES.newConversation.connections,
    headers: { 'content-type': 'application/json', ...target.headers },
    requests: [{
      setupRequest: (req: { method?: string }) => ({
        ...req,
        body: JSON.stringify({ model: target.model, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: `question ${tag}-${n++}: ${'context '.repeat(200)}` }] }),
      }),
    }],
    ...extra,
  });
  await autocannon(options({ amount: 500 }));
  await settle(tag, () => autocannon(options({ duration: SIZES.newConversation.seconds })));
  const cpu0 = cpuMs(target.pid);
  const result = await autocannon(options({ duration: SIZES.newConversation.seconds }));
  const cpu = cpuMs(target.pid) - cpu0;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx and ${result.errors} errors under autocannon`);
  const done = result['2xx'];
  return { requests: done, rps: done / result.duration, p50: result.latency.p50, p99: result.latency.p99, cpuPerRequest: cpu / done, rssMb: rssMb(target.pid), extra: {} };
}

/**
 * (c) One conversation already grown to `bytes` (a resumed transcript of a few big tool results),
 * then requests one at a time, each adding one ~2 KB turn; the first three are not measured.
 */
export async function deepLoad(target: Target, tag: string, bytes: number): Promise<RunResult> {
  await warmUp(target, tag, false);
  const { results, requests, turnBytes } = SIZES.deep;
  const skip = 3;
  let cpu0 = 0;
  const load = (t: string) => drive(target, {
    concurrency: 1, conversations: 1, turns: skip + requests, turnBytes: () => turnBytes, stream: false, tag: t,
    history: (c) => grownHistory(t, c, bytes, results),
    beforeRequest: (_c, turn) => { if (turn === skip) cpu0 = cpuMs(target.pid); },
  });
  await settle(tag, load);
  const run = await load(tag);
  const measured = run.samples.filter((s) => s.turn >= skip);
  const wallMs = measured.reduce((t, s) => t + s.ms, 0);
  return fromSamples(target, measured, wallMs, cpuMs(target.pid) - cpu0);
}

/**
 * (d) 1,000 conversations of ~100 KB (4 requests, each adding a ~25 KB turn), 8 at once, driven to
 * completion: RSS after. Then the cost of a session's length: see `lengthEffect`.
 */
export async function liveSessionsLoad(target: Target, tag: string): Promise<RunResult> {
  await warmUp(target, tag, false);
  const { conversations, turns, turnBytes } = SIZES.live;
  const cpu0 = cpuMs(target.pid);
  const run = await drive(target, { concurrency: 8, conversations, turns, turnBytes: () => turnBytes, stream: false, tag });
  const result = fromSamples(target, run.samples, run.wallMs, cpuMs(target.pid) - cpu0);
  return { ...result, extra: await lengthEffect(target, tag) };
}

/**
 * One session of 1,005 small requests, one at a time. Its requests 996-1,005 go in alternation with
 * requests 6-15 of a new session, so "request 1000" and "request 10" are measured side by side on
 * the same machine load; its own requests 6-15, sent ~1,000 requests earlier, are reported too.
 */
async function lengthEffect(target: Target, tag: string): Promise<Record<string, number>> {
  const pool = new Pool(target.origin, { connections: 1, keepAliveTimeout: 60_000 });
  const small = { stream: false, turnBytes: () => 0 };
  try {
    const long = new Conversation(pool, target, { ...small, tag: `${tag}-long` }, 0);
    const own10: number[] = [];
    for (let request = 1; request <= 990; request++) {
      const ms = await long.step();
      if (request >= 6 && request <= 15) own10.push(ms);
    }
    const fresh = new Conversation(pool, target, { ...small, tag: `${tag}-new` }, 1);
    const at10: number[] = [];
    const at1000: number[] = [];
    for (let k = 1; k <= 15; k++) {
      // The long session's request 990 + k and the new one's request k; which goes first alternates.
      let deep: number;
      let early: number;
      if (k % 2 === 0) {
        deep = await long.step();
        early = await fresh.step();
      } else {
        early = await fresh.step();
        deep = await long.step();
      }
      if (k >= 6) {
        at1000.push(deep);
        at10.push(early);
      }
    }
    const req10 = median(at10);
    const req1000 = median(at1000);
    return { own10: median(own10), req10, req1000, growth: req1000 / req10 };
  } finally {
    await pool.close();
  }
}
