/** Test client for the simulator's Anthropic wire: JSON replies, and SSE streams read as typed events. */
import type { Sim } from '../../src/sim/server.js';

export interface MessagesReply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface MessagesStream {
  status: number;
  text: string;
  /** `event:` names in order. */
  names: string[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  events: any[];
}

export const VERSION = { 'anthropic-version': '2023-06-01' };

export async function messages(sim: Sim, body: unknown, headers: Record<string, string> = VERSION, path = '/anthropic/v1/messages'): Promise<MessagesReply> {
  const res = await fetch(`${sim.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : JSON.parse(text) };
}

export async function messagesStream(sim: Sim, body: Record<string, unknown>, headers: Record<string, string> = VERSION): Promise<MessagesStream> {
  const res = await fetch(`${sim.origin}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await res.text();
  const names: string[] = [];
  const events: unknown[] = [];
  for (const frame of text.split('\n\n').filter((f) => f !== '')) {
    const [eventLine, dataLine, ...rest] = frame.split('\n');
    if (!eventLine?.startsWith('event: ') || !dataLine?.startsWith('data: ') || rest.length > 0) throw new Error(`not an event frame: ${frame}`);
    names.push(eventLine.slice('event: '.length));
    events.push(JSON.parse(dataLine.slice('data: '.length)));
  }
  return { status: res.status, text, names, events };
}

export const userText = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
