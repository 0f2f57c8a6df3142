/**
 * Runs an AgentClient through the proxy with the official `openai` client, and reads what the
 * session left on disk: its log's size against the conversation it holds, its rewrites, its
 * cache-break causes, and whether any credential the client planted reached the log.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import type { AgentClient } from './agent-client.js';
import { sessionsDir, type World } from './harness.js';
import { ask, type Answer } from './wires-client.js';

export interface DriveOptions {
  requests: number;
  headers?: Record<string, string>;
  /** Stream every request whose index is even (default), every one, or none. */
  stream?: 'alternate' | 'always' | 'never';
}

export interface Driven {
  /** What the client received, one per request answered. */
  answers: Answer[];
  /** The first request that failed (the client cannot go on without its reply), if one did. */
  failed?: { request: number; error: string };
}

/** `requests` requests of `agent` on `model`, until one fails. */
export async function drive(world: World, model: string, agent: AgentClient, opts: DriveOptions): Promise<Driven> {
  const answers: Answer[] = [];
  for (let i = 0; i < opts.requests; i++) {
    const { messages, tools } = agent.request();
    const stream = opts.stream === 'always' || (opts.stream !== 'never' && i % 2 === 0);
    try {
      const a = await ask(world, model, messages, tools, { stream, ...(opts.headers === undefined ? {} : { headers: opts.headers }) });
      answers.push(a);
      agent.receive({ content: a.content, toolCalls: a.toolCalls, reasoning: a.reasoning });
    } catch (err) {
      return { answers, failed: { request: i, error: String(err) } };
    }
  }
  return { answers };
}

/** One session log: its events and the byte length of each line (newline included). */
export interface LogFile {
  id: string;
  bytes: number;
  lines: { event: LogEvent; bytes: number }[];
}

export async function readLogFiles(world: World): Promise<LogFile[]> {
  const dir = sessionsDir(world);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.jsonl')).sort();
  const out: LogFile[] = [];
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8');
    const lines = text.split('\n').filter((l) => l !== '').map((l) => ({ event: JSON.parse(l) as LogEvent, bytes: Buffer.byteLength(l) + 1 }));
    out.push({ id: name.slice(0, -'.jsonl'.length), bytes: Buffer.byteLength(text), lines });
  }
  return out;
}

/** The log files holding `marker` (a conversation's tag). */
export function filesWith(files: readonly LogFile[], marker: string): LogFile[] {
  return files.filter((f) => f.lines.some((l) => JSON.stringify(l.event).includes(marker)));
}

/**
 * The envelope of one `client.msg` line around its message: `{"seq":…,"ts":…,"type":"client.msg","msg":…}`
 * and the newline, with a six-digit seq.
 */
export const CLIENT_MSG_ENVELOPE =
  Buffer.byteLength(JSON.stringify({ seq: 100_000, ts: '2026-12-01T10:00:00.000Z', type: 'client.msg', msg: null })) - 'null'.length + 1;

/** Events written once per session or per request, whatever the client sends. */
const PER_REQUEST = new Set(['session.start', 'session.resume', 'catalog', 'llm.req', 'llm.resp', 'llm.error']);

export interface LogSize {
  /** Bytes of every file. */
  bytes: number;
  /**
   * What a log that writes each message once needs: the client's distinct messages as it sent
   * them, each in a client.msg envelope, plus every per-request line (llm.req, llm.resp, ...) as
   * written, each line counted once even if a fork copied it into another file.
   */
  budget: number;
  ratio: number;
  clientMsgs: number;
  rewrites: number;
}

export function logSize(files: readonly LogFile[], agent: AgentClient): LogSize {
  const perRequest = new Map<string, number>();
  let bytes = 0;
  let clientMsgs = 0;
  let rewrites = 0;
  for (const f of files) {
    bytes += f.bytes;
    for (const { event, bytes: n } of f.lines) {
      if (event.type === 'client.msg') clientMsgs++;
      if (event.type === 'client.rewrite') rewrites++;
      if (!PER_REQUEST.has(event.type)) continue;
      const { ts: _ts, ...rest } = event;
      perRequest.set(JSON.stringify(rest), n);
    }
  }
  let budget = agent.distinctBytes + agent.distinctMessages * CLIENT_MSG_ENVELOPE;
  for (const n of perRequest.values()) budget += n;
  return { bytes, budget, ratio: bytes / budget, clientMsgs, rewrites };
}

export type LlmReq = EventOf<'llm.req'>;

export function llmReqs(events: readonly LogEvent[]): LlmReq[] {
  return events.filter((e): e is LlmReq => e.type === 'llm.req');
}

/** Per cause, the indexes of the requests that logged it. */
export function causes(reqs: readonly LlmReq[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  reqs.forEach((r, i) => (out[r.cause ?? 'unset'] ??= []).push(i));
  return out;
}

export interface Breaks {
  /** Causes other than first, none and trim, with how many requests logged each. */
  unexpected: Record<string, number>;
  /** Requests whose window elided something new: one per high-water crossing. */
  crossings: number[];
  /** Requests whose cause is `trim`. */
  trims: number[];
  /** Fewest requests between two crossings (Infinity with fewer than two). */
  minGap: number;
}

export function breaks(reqs: readonly LlmReq[]): Breaks {
  const byCause = causes(reqs);
  const unexpected = Object.fromEntries(
    Object.entries(byCause).filter(([c]) => !['first', 'none', 'trim'].includes(c)).map(([c, v]) => [c, v.length]),
  );
  const crossings = reqs.map((r, i) => (r.elided.length > 0 ? i : -1)).filter((i) => i >= 0);
  const gaps = crossings.slice(1).map((c, i) => c - crossings[i]!);
  return { unexpected, crossings, trims: byCause.trim ?? [], minGap: Math.min(...gaps) };
}

/** Credentials the client planted whose secret part is in some log file. */
export async function leakedCredentials(world: World, agent: AgentClient): Promise<string[]> {
  const text = (await readLogFiles(world)).map((f) => f.lines.map((l) => JSON.stringify(l.event)).join('\n')).join('\n');
  return agent.credentials.planted.filter((c) => text.includes(c.core)).map((c) => c.kind);
}
