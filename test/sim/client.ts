/** Test client for the simulator: plain fetch for JSON, an SSE reader for streams. */
import { afterEach } from 'vitest';
import { createSim, type Sim } from '../../src/sim/server.js';
import type { SimOptions } from '../../src/sim/types.js';

export interface JsonReply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface StreamReply {
  status: number;
  text: string;
  /** Parsed `data:` payloads, `[DONE]` left as the string. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  events: any[];
}

export interface CallOptions {
  /** Base URL with `/v1`; the sim's default mode when absent. */
  base?: string;
  headers?: Record<string, string>;
}

export async function post(sim: Sim, body: unknown, opts: CallOptions = {}): Promise<JsonReply> {
  const res = await fetch(`${opts.base ?? sim.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text === '' ? null : JSON.parse(text) };
}

export async function postStream(sim: Sim, body: Record<string, unknown>, opts: CallOptions = {}): Promise<StreamReply> {
  const reply = await fetch(`${opts.base ?? sim.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await reply.text();
  const events = text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      if (!frame.startsWith('data: ')) throw new Error(`not a data frame: ${frame}`);
      const data = frame.slice('data: '.length);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
  return { status: reply.status, text, events };
}

/** Deterministic filler text of about `tokens` tokens (4 bytes each). */
export function text(tokens: number, tag = 'x'): string {
  let out = '';
  for (let i = 0; out.length < tokens * 4; i++) out += `${tag}${i % 1000} `.padStart(8, '.');
  return out.slice(0, tokens * 4);
}

export function user(content: string): { role: 'user'; content: string } {
  return { role: 'user', content };
}

/** A fixed clock, so `created` and timestamps do not vary between runs. */
export const fixedClock = (): number => 1_760_000_000_000;

/** Any other request whose reply is JSON (models, admin endpoints). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function fetchJson(url: string, init?: RequestInit): Promise<any> {
  return (await fetch(url, init)).json();
}

/**
 * A simulator per test on the fixed clock, closed after each: the returned function starts the
 * test's own (`opts` for every one of the file's tests, e.g. a mode).
 */
export function simPerTest(opts: SimOptions = {}): () => Promise<Sim> {
  let sim: Sim | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });
  return async () => {
    sim = await createSim({ clock: fixedClock, ...opts });
    return sim;
  };
}
