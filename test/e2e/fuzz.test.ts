/**
 * Bad input never costs more than a 4xx (docs/errors.md): over 10,000 generated requests to the
 * three inbound wires, valid and bent out of shape (fuzz-bodies.ts, fuzz-mutations.ts), eight at a
 * time, against the simulator on every upstream wire. No answer is a 5xx, every 4xx is in the
 * caller's dialect with a documented code (fuzz-check.ts), no refused request leaves a trace in the
 * log, sessions that met bad requests still answer their next turn at once, and at the end the
 * proxy is healthy and every session log replays.
 *
 * Deterministic: the seed is fixed (FUZZ_SEED overrides it) and printed with a counter-example on
 * failure; request n of a run is the same request in every run.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvents } from '../../src/cli/verify.js';
import { readLog } from '../../src/log/reader.js';
import { LogStore } from '../../src/log/store.js';
import { bodyOptions, conv, MARK, MODELS, PATH_OF, render, WIRES, type Conv, type Sent, type Turn, type Wire } from './fuzz-bodies.js';
import { documentedCodes, problemsOf, replyText } from './fuzz-check.js';
import { mutate, mutation, type Mutation } from './fuzz-mutations.js';
import { sessionsDir } from './harness.js';
import { startWiresWorld, type WiresWorld } from './wires-world.js';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const PER_WIRE = Number(process.env.FUZZ_PER_WIRE ?? 3_200);
const SESSIONS = 48;
const CONCURRENCY = 8;
/** Under the 150 KB and over the 300 KB huge values the mutations make. */
const BODY_LIMIT = 192 * 1024;
/** A request that takes longer has met a held lock or a hang: nothing here is slow upstream. */
const ANSWER_MS = 15_000;
/** The turn that continues a session after its bad requests: a lock left held would stall it. */
const CONTINUE_MS = 5_000;
/** Per block: a few seconds per thousand requests on idle cores; the margin is for a loaded machine. */
const BLOCK_MS = 120_000;

let w: WiresWorld;
const agent = new Agent({ connections: CONCURRENCY * 2 });
const codes = documentedCodes();
let sent = 0;
/** Markers (one per request, in its last user text) that the upstream was sent. */
const upstreamMarkers = new Set<number>();
const refused: number[] = [];
const answered: number[] = [];
const failures: { n: number; problem: string; request: string; answer: string }[] = [];

beforeAll(async () => {
  w = await startWiresWorld({
    bodyLimit: BODY_LIMIT,
    models: `
[models.ds]
provider = "ds"
model = "deepseek-v4"

[models.an]
provider = "an"
model = "claude-sim"

[models.rs]
provider = "rs"
model = "gpt-sim"

[models.ol]
provider = "ol"
model = "qwen-sim"
`,
  });
});
afterAll(async () => {
  await agent.close();
  await w?.close();
});

const marker = (n: number) => `fzm${n}z`;
const MARKERS = /fzm(\d+)z/g;

/** Notes which requests reached the upstream, and lets the tap's copies go. */
let tapped = 0;
function drainTap(): void {
  for (const r of w.tap.requests.splice(0)) {
    tapped++;
    for (const m of (typeof r.body === 'string' ? r.body : JSON.stringify(r.body)).matchAll(MARKERS)) upstreamMarkers.add(Number(m[1]));
  }
}

function stamp(c: Conv, n: number): Conv {
  return { ...c, turns: c.turns.map((t) => (t.kind === 'user' ? { ...t, text: t.text.replace(MARK, marker(n)) } : t)) };
}

interface Result { status: number; text: string }

interface SendOptions { beta?: boolean; timeoutMs?: number; alone?: boolean }

/** One request; every answer is checked, and remembered by its marker for the log checks. */
async function send(wire: Wire, n: number, req: Sent, opts: SendOptions = {}): Promise<Result> {
  sent++;
  const tappedBefore = tapped;
  const headers: Record<string, string> = { authorization: 'Bearer test', ...(req.contentType === undefined ? {} : { 'content-type': req.contentType }), ...req.headers };
  const url = `${w.proxy.url}${PATH_OF[wire]}${opts.beta === true ? '?beta=true' : ''}`;
  let status = 0;
  let text = '';
  let contentType = '';
  try {
    // undici's own request, not fetch: the client costs far less per request, and sends the bytes as given.
    const res = await request(url, { method: 'POST', headers, body: typeof req.body === 'string' ? Buffer.from(req.body) : req.body, dispatcher: agent, signal: AbortSignal.timeout(opts.timeoutMs ?? ANSWER_MS) });
    status = res.statusCode;
    contentType = String(res.headers['content-type'] ?? '');
    text = await res.body.text();
  } catch (err) {
    fail(n, req, `no answer: ${(err as Error).message}`, '');
    return { status: 0, text: '' };
  }
  drainTap();
  const upstream = upstreamMarkers.has(n) || (opts.alone === true && tapped > tappedBefore);
  const problems = problemsOf({ wire, status, contentType, text, upstream }, codes);
  // A body whose marker a mutation removed reaches the upstream unseen: its 4xx may be the
  // upstream's own. Such answers are sent again alone, when what reaches the upstream is plain.
  if (problems.length > 0 && status >= 400 && status < 500 && !upstream && opts.alone !== true) suspects.push({ wire, n, req, opts });
  else for (const problem of problems) fail(n, req, problem, text);
  if (status >= 400 && !upstream) refused.push(n);
  if (status === 200) answered.push(n);
  return { status, text };
}

function fail(n: number, req: Sent, problem: string, answer: string): void {
  const body = typeof req.body === 'string' ? req.body : `bytes ${Buffer.from(req.body).toString('hex').slice(0, 400)}`;
  failures.push({ n, problem, request: `${req.contentType ?? '(no content-type)'} ${JSON.stringify(req.headers ?? {})} ${body.slice(0, 1_500)}`, answer: answer.slice(0, 600) });
}

const suspects: { wire: Wire; n: number; req: Sent; opts: SendOptions }[] = [];

/** Each suspect again, alone: if the upstream was sent anything, the 4xx was its own. */
async function recheckSuspects(): Promise<void> {
  for (const s of suspects.splice(0)) await send(s.wire, s.n, s.req, { ...s.opts, alone: true });
}

/** Run `tasks` with at most CONCURRENCY in flight. */
async function pool<T>(items: readonly T[], task: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await task(items[i]!, i);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** The failures since the last call, reported with the seed that reproduces them. */
function expectNoFailures(): void {
  const found = failures.splice(0);
  const report = found.slice(0, 5).map((f) => `#${f.n} ${f.problem}\n  request: ${f.request}\n  answer: ${f.answer}`).join('\n');
  expect(found.length, `FUZZ_SEED=${SEED}: ${found.length} failures; first ones:\n${report}`).toBe(0);
}

const generated = fc.record({ c: conv, options: bodyOptions, mutation, beta: fc.boolean() });

describe.each(WIRES.map((wire, i) => ({ wire, i })))('fuzzing $wire', ({ wire, i }) => {
  it(`${PER_WIRE} generated requests: never a 5xx, every 4xx in the wire's dialect with a documented code`, async () => {
    const requests = fc.sample(generated, { seed: SEED + i, numRuns: PER_WIRE });
    const base = (i + 1) * 100_000;
    await pool(requests, async (r, k) => {
      const n = base + k;
      await send(wire, n, mutate(render(wire, stamp(r.c, n), r.options), r.mutation), { beta: wire === 'messages' && r.beta });
    });
    await recheckSuspects();
    expectNoFailures();
  }, BLOCK_MS);
});

// ---- sessions ------------------------------------------------------------------------------

type Step =
  | { kind: 'good' }
  | { kind: 'bad'; mutation: Mutation }
  | { kind: 'previous'; bad: string | undefined }
  /** A client that leaves while its turn waits upstream (a slow reply), or before. */
  | { kind: 'leave'; afterMs: number; stream: boolean };

const script = fc.record({
  wire: fc.constantFrom(...WIRES),
  model: fc.constantFrom(...MODELS),
  explicit: fc.boolean(),
  steps: fc.array(fc.oneof(
    { weight: 2, arbitrary: fc.constant<Step>({ kind: 'good' }) },
    { weight: 4, arbitrary: mutation.map((m): Step => ({ kind: 'bad', mutation: m })) },
    { weight: 1, arbitrary: fc.option(fc.constantFrom('9', '_x', 'x', '0'), { nil: undefined }).map((bad): Step => ({ kind: 'previous', bad })) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), afterMs: fc.integer({ min: 1, max: 60 }), stream: fc.boolean() }) },
  ), { minLength: 6, maxLength: 14 }),
});

/** A request whose client goes away after `afterMs`, answered or not. */
async function leave(wire: Wire, body: string, headers: Record<string, string> | undefined, afterMs: number): Promise<void> {
  sent++;
  try {
    const res = await request(`${w.proxy.url}${PATH_OF[wire]}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, dispatcher: agent, signal: AbortSignal.timeout(afterMs),
    });
    await res.body.text();
  } catch {
    // It left: what the proxy does next is what the session's next turn shows.
  }
}

interface Touched { wire: Wire; first: number; last: number }
const touched: Touched[] = [];

describe('sessions that meet bad requests', () => {
  it(`${SESSIONS} sessions mixing good and bad turns: each good turn answered, its next turn too, at once`, async () => {
    const scripts = fc.sample(script, { seed: SEED + 7, numRuns: SESSIONS });
    await pool(scripts, async (s, k) => {
      const base = 900_000 + k * 100;
      const system = `fuzz session ${k} (${SEED}): you are a careful agent.`;
      const history: Turn[] = [];
      const headers = s.explicit ? { 'x-session-id': `fuzz-${SEED}-${k}` } : undefined;
      let lastId: string | undefined;
      let first: number | undefined;
      const good = async (n: number, timeoutMs?: number) => {
        const user: Turn = { kind: 'user', text: `${marker(n)} turn [[say reply ${k}-${n}]]` };
        const body = JSON.stringify(render(s.wire, { system, turns: [...history, user] }, { model: s.model, stream: false, tools: false }));
        const r = await send(s.wire, n, { body, contentType: 'application/json', ...(headers === undefined ? {} : { headers }) }, { timeoutMs });
        if (r.status !== 200) {
          fail(n, { body, contentType: 'application/json' }, `a good turn of session ${k} answered ${r.status}`, r.text);
          return;
        }
        history.push(user, { kind: 'assistant', text: replyText(s.wire, r.text), calls: [] });
        if (s.wire === 'responses') lastId = (JSON.parse(r.text) as { id: string }).id;
        first ??= n;
      };
      await good(base);
      for (const [j, step] of s.steps.entries()) {
        const n = base + 1 + j;
        if (step.kind === 'good') await good(n);
        else if (step.kind === 'bad') {
          const user: Turn = { kind: 'user', text: `${marker(n)} bad turn [[say never]]` };
          await send(s.wire, n, mutate(render(s.wire, { system, turns: [...history, user] }, { model: s.model, stream: false, tools: false }), step.mutation));
        } else if (step.kind === 'leave') {
          const user: Turn = { kind: 'user', text: `${marker(n)} leaving [[slow 20]] [[say too late]]` };
          const body = JSON.stringify(render(s.wire, { system, turns: [...history, user] }, { model: s.model, stream: step.stream, tools: false }));
          await leave(s.wire, body, headers, step.afterMs);
        } else if (s.wire === 'responses' && lastId !== undefined) {
          // A continuation by the id of the session's last reply; with `bad`, an id that names no reply.
          const id = step.bad === undefined ? lastId : step.bad === 'x' ? `resp_${'x'.repeat(300)}_1` : `${lastId}${step.bad}`;
          const body = JSON.stringify({ model: s.model, previous_response_id: id, input: `${marker(n)} by id`, max_output_tokens: 32 });
          const r = await send(s.wire, n, { body, contentType: 'application/json' });
          if (step.bad === undefined && r.status !== 200) fail(n, { body, contentType: undefined }, `a continuation by id answered ${r.status}`, r.text);
        }
      }
      const last = base + 99;
      await good(last, CONTINUE_MS);
      if (first !== undefined) touched.push({ wire: s.wire, first, last });
    });
    await recheckSuspects();
    expectNoFailures();
    expect(touched.length).toBe(SESSIONS);
  }, BLOCK_MS);
});

// ---- afterwards ----------------------------------------------------------------------------

/** Every marker in every session log, with the logs that hold it (a fork's log starts with its parent's events). */
async function loggedMarkers(): Promise<Map<number, Set<string>>> {
  const out = new Map<number, Set<string>>();
  for (const name of await readdir(sessionsDir(w))) {
    if (!name.endsWith('.jsonl')) continue;
    const text = await readFile(join(sessionsDir(w), name), 'utf8');
    for (const m of text.matchAll(MARKERS)) {
      const n = Number(m[1]);
      out.set(n, (out.get(n) ?? new Set()).add(name));
    }
  }
  return out;
}

describe('after the fuzzing', () => {
  it('sent at least 10,000 requests', () => {
    expect(sent).toBeGreaterThanOrEqual(10_000);
  });

  it('the proxy is healthy and answers a normal request on each wire', async () => {
    const health = await fetch(`${w.proxy.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', damaged_sessions: 0 });
    for (const wire of WIRES) {
      const body = render(wire, { system: undefined, turns: [{ kind: 'user', text: `after the fuzz ${SEED} [[say fine]]` }] }, { model: 'ds', stream: false, tools: false });
      const res = await fetch(`${w.proxy.url}${PATH_OF[wire]}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer test' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      expect(replyText(wire, await res.text())).toContain('fine');
    }
  });

  it('no request refused before admission left anything in the log; every session went on in its own log', async () => {
    const logged = await loggedMarkers();
    // Not vacuous: thousands were refused, and the answered ones are in the log.
    expect(refused.length).toBeGreaterThan(3_000);
    expect(answered.filter((n) => logged.has(n)).length).toBeGreaterThan(1_000);
    expect(refused.filter((n) => logged.has(n))).toEqual([]);
    for (const t of touched) {
      const together = [...(logged.get(t.last) ?? [])].filter((name) => logged.get(t.first)?.has(name));
      expect(together.length, `the last turn of the session that began with request ${t.first}`).toBeGreaterThan(0);
    }
  });

  it('every session log reads back whole and every logged request replays to its digest', async () => {
    const store = new LogStore(join(w.dir, 'data'));
    const ids = await store.listSessions();
    expect(ids.length).toBeGreaterThan(SESSIONS);
    let requests = 0;
    for (const id of ids) {
      const log = await readLog(store.file(id));
      expect(log.torn, id).toBeUndefined();
      const bad = verifyEvents(log.events, { file: store.file(id) }).filter((r) => !r.ok);
      requests += log.events.filter((e) => e.type === 'llm.req').length;
      expect(bad.map((r) => `${id} seq ${r.seq}: ${r.problem ?? 'digest'}`)).toEqual([]);
    }
    expect(requests).toBeGreaterThan(1_000);
  });
});
