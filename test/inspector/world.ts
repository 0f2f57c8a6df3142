/**
 * The inspector's test world: the e2e world (proxy and simulator on port 0) plus a conversation
 * driver and a JSON getter through `inject()`.
 */
import type OpenAI from 'openai';
import { startWorld as start, type World, type WorldOptions } from '../e2e/harness.js';

/** A JSON answer as the tests read it: field by field, checked by the expectations themselves. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

export { type World, type WorldOptions };

/** A priced route on the simulator's deepseek mode, `pd`, besides the harness's models. */
export const PRICED = `
[models.pd]
provider = "ds"
model = "deepseek-v4"
price = { input = 1, cache_read = 0.1, output = 2 }
`;

export function startWorld(opts: WorldOptions = {}): Promise<World> {
  const extra = opts.extraToml;
  return start({ ...opts, extraToml: (sim) => `${PRICED}\n${typeof extra === 'function' ? extra(sim) : extra ?? ''}` });
}

/** Sends `messages`, appends the reply as a client would, and returns it. */
export async function turn(w: World, messages: Msg[], model = 'ds', headers: Record<string, string> = {}): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const r = await w.client.chat.completions.create({ model, messages, tools: TOOLS }, { headers });
  const m = r.choices[0]!.message;
  messages.push({ role: 'assistant', content: m.content, ...(m.tool_calls === undefined ? {} : { tool_calls: m.tool_calls }) } as Msg);
  return r;
}

/** A conversation of `n` user turns under `tag`; returns its messages. */
export async function conversation(w: World, tag: string, n: number, model = 'ds', headers: Record<string, string> = {}): Promise<Msg[]> {
  const messages: Msg[] = [{ role: 'system', content: `You are a test agent ${tag}. ${'Keep this prefix stable. '.repeat(400)}` }];
  for (let i = 0; i < n; i++) {
    messages.push({ role: 'user', content: `${tag} turn ${i} [[say answer ${i}]]` });
    await turn(w, messages, model, headers);
  }
  return messages;
}

export async function getJson<T = Record<string, unknown>>(w: World, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T; headers: Record<string, unknown> }> {
  const res = await w.proxy.app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, body: res.json() as T, headers: res.headers };
}
