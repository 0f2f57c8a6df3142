/** Plain-fetch helpers for the simulator's native Gemini wire (no proxy code, no SDK). */
import type { Sim } from '../../src/sim/server.js';

// Replies are read field by field in the tests, as a client reads JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;
export const MODEL = 'gemini-3-flash-preview';
export const KEY = 'gk';

export async function call(s: Sim, path: string, body?: unknown, init: { method?: string; key?: string | null } = {}): Promise<{ status: number; json: Json; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key !== null) headers['x-goog-api-key'] = init.key ?? KEY;
  const r = await fetch(`${s.origin}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {
    // an SSE body: read `text`
  }
  return { status: r.status, json, text };
}

export const generate = (s: Sim, body: unknown, model = MODEL) => call(s, `/v1beta/models/${model}:generateContent`, body);
export const user = (text: string): Json => ({ role: 'user', parts: [{ text }] });

/** The JSON of each `data:` event of an SSE body. */
export function sseChunks(text: string): Json[] {
  return text.split('\r\n\r\n').filter((f) => f !== '').map((f) => JSON.parse(f.replace(/^data: /, '')) as Json);
}
