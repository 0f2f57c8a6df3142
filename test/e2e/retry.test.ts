/**
 * A retry of the request the log answered last is answered from the log, with no upstream call
 * (the SDK after a dropped connection, or its signals by hand); other repeats go upstream.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvents } from '../../src/cli/verify.js';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { startProxy } from '../../src/proxy/server.js';
import { readSessions, startWorld, tag, type World } from './harness.js';
import { contentOf, post, startDroppingFront, type DroppingFront } from './wire-faults.js';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

let w: World;
let front: DroppingFront;
beforeAll(async () => {
  w = await startWorld();
  front = await startDroppingFront(w.proxy.url);
});
afterAll(async () => {
  await front?.close();
  await w?.close();
});

/** The logs of one conversation (its tag is in its system prompt). */
async function logsOf(t: string): Promise<LogEvent[][]> {
  return [...(await readSessions(w)).values()].filter((events) => JSON.stringify(events).includes(t));
}

/** The requests logged, a fork's copies of its parent's events left out. */
function requestsIn(logs: LogEvent[][]): EventOf<'llm.req'>[] {
  return logs.flatMap((events) => {
    const copiedBelow = (events[0] as EventOf<'session.start'>).parent?.seq ?? 0;
    return events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req' && e.seq >= copiedBelow);
  });
}

async function retriesAnswered(): Promise<number> {
  const text = await (await fetch(`${w.proxy.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('proxy_retries_answered_total{') && l.includes('model="oa"'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('the official SDK, its connection dropped after the proxy logged the answer', () => {
  it.each([false, true])('stream %s: its retry gets the logged reply, with no upstream call', async (stream) => {
    const client = new OpenAI({ baseURL: `${front.origin}/v1`, apiKey: 'test', maxRetries: 2 });
    const t = tag('sdk-retry');
    const messages: Msg[] = [{ role: 'system', content: `You answer ${t}.` }, { role: 'user', content: `${t} [[say answered once]]` }];
    const simBefore = w.sim.requests.length;
    const seenBefore = front.seen.length;
    const answeredBefore = await retriesAnswered();

    front.dropNextAnswer();
    let content = '';
    if (stream) {
      const s = await client.chat.completions.create({ model: 'oa', messages, stream: true });
      for await (const chunk of s) content += chunk.choices[0]?.delta.content ?? '';
    } else {
      content = (await client.chat.completions.create({ model: 'oa', messages })).choices[0]!.message.content ?? '';
    }

    // The first answer reached the front whole, and the client never saw it; the SDK tried again.
    const dropped = await front.dropped!;
    expect(dropped).toContain('answered once');
    expect(front.seen.slice(seenBefore).map((h) => h['x-stainless-retry-count'])).toEqual(['0', '1']);
    expect(content).toBe('answered once');
    expect(w.sim.requests.length - simBefore).toBe(1);
    const logs = await logsOf(t);
    expect(logs).toHaveLength(1);
    expect(requestsIn(logs)).toHaveLength(1);
    expect(logs[0]!.filter((e) => e.type === 'llm.resp')).toHaveLength(1);
    expect((await retriesAnswered()) - answeredBefore).toBe(1);
  });
});

describe('retry signals sent by hand', () => {
  /** A conversation of two answered turns; returns the second request's messages and reply. */
  async function conversation(name: string, headers: Record<string, string> = {}) {
    const t = tag(name);
    const messages: Msg[] = [{ role: 'system', content: `You answer ${t}.` }, { role: 'user', content: `${t} [[say one]]` }];
    const first = await post(w.proxy.url, { model: 'oa', messages }, headers);
    expect(first.status).toBe(200);
    messages.push({ role: 'assistant', content: contentOf(first) }, { role: 'user', content: 'and then [[say two]]' });
    const second = await post(w.proxy.url, { model: 'oa', messages, temperature: 0.5 }, headers);
    expect(second.status).toBe(200);
    expect(contentOf(second)).toBe('two');
    return { t, messages };
  }

  it.each([false, true])('x-stainless-retry-count: 1 on a repeat of the last answered request is answered from the log (stream %s)', async (stream) => {
    const { t, messages } = await conversation('stainless');
    const simBefore = w.sim.requests.length;
    const answeredBefore = await retriesAnswered();
    const r = await post(w.proxy.url, { model: 'oa', messages, temperature: 0.5, stream }, { 'x-stainless-retry-count': '1' });
    expect(r.status).toBe(200);
    expect(r.contentType).toMatch(stream ? /^text\/event-stream/ : /^application\/json/);
    expect(contentOf(r)).toBe('two');
    expect(w.sim.requests.length).toBe(simBefore);
    expect(requestsIn(await logsOf(t))).toHaveLength(2);
    expect((await retriesAnswered()) - answeredBefore).toBe(1);
  });

  it('the same repeat without a retry signal goes upstream again', async () => {
    const { t, messages } = await conversation('no-signal');
    const simBefore = w.sim.requests.length;
    const r = await post(w.proxy.url, { model: 'oa', messages, temperature: 0.5 }, { 'x-stainless-retry-count': '0' });
    expect(r.status).toBe(200);
    expect(contentOf(r)).toBe('two');
    expect(w.sim.requests.length).toBe(simBefore + 1);
    expect(requestsIn(await logsOf(t))).toHaveLength(3);
  });

  it('a repeated Idempotency-Key is answered from the log; a new key goes upstream', async () => {
    const t = tag('idempotency');
    const messages: Msg[] = [{ role: 'system', content: `You answer ${t}.` }, { role: 'user', content: `${t} [[say keyed]]` }];
    const key = { 'idempotency-key': `key-${t}` };
    expect(contentOf(await post(w.proxy.url, { model: 'oa', messages }, key))).toBe('keyed');
    const simBefore = w.sim.requests.length;
    const answeredBefore = await retriesAnswered();
    const again = await post(w.proxy.url, { model: 'oa', messages }, key);
    expect(again.status).toBe(200);
    expect(contentOf(again)).toBe('keyed');
    expect(w.sim.requests.length).toBe(simBefore);
    expect((await retriesAnswered()) - answeredBefore).toBe(1);
    const logged = await logsOf(t);
    expect(requestsIn(logged)).toHaveLength(1);
    // The log holds the key's digest, never the key.
    expect(requestsIn(logged)[0]!.idempotency).toBe(createHash('sha256').update(`key-${t}`).digest('hex'));
    expect(JSON.stringify(logged)).not.toContain(`key-${t}`);

    const fresh = await post(w.proxy.url, { model: 'oa', messages }, { 'idempotency-key': `other-${t}` });
    expect(contentOf(fresh)).toBe('keyed');
    expect(w.sim.requests.length).toBe(simBefore + 1);
    expect(requestsIn(await logsOf(t))).toHaveLength(2);
  });

  it('a retry with other parameters (temperature) goes upstream', async () => {
    const named = { 'x-session-id': `conv-${tag('params')}` };
    const { t, messages } = await conversation('other-params', named);
    const simBefore = w.sim.requests.length;
    const answeredBefore = await retriesAnswered();
    const r = await post(w.proxy.url, { model: 'oa', messages, temperature: 0.9 }, { 'x-stainless-retry-count': '1', ...named });
    expect(r.status).toBe(200);
    expect(w.sim.requests.length).toBe(simBefore + 1);
    expect(await retriesAnswered()).toBe(answeredBefore);
    const requests = requestsIn(await logsOf(t));
    expect(requests.map((e) => e.params.temperature)).toEqual([undefined, 0.5, 0.9]);
  });
});

// Last: it restarts the proxy, which the dropping front above does not follow.
it('a restarted proxy answers a repeated Idempotency-Key from the log: the key is in the answered llm.req, not in memory', async () => {
  const t = tag('idempotency-restart');
  const messages: Msg[] = [{ role: 'system', content: `You answer ${t}.` }, { role: 'user', content: `${t} [[say kept]]` }];
  const key = { 'idempotency-key': `key-${t}` };
  expect(contentOf(await post(w.proxy.url, { model: 'oa', messages }, key))).toBe('kept');
  w.proxy.app.server.closeAllConnections();
  await w.proxy.close();
  w.proxy = await startProxy(withSimulator(loadConfig({ path: join(w.dir, 'config.toml'), env: {}, cwd: w.dir }), w.sim.url));
  const simBefore = w.sim.requests.length;
  const again = await post(w.proxy.url, { model: 'oa', messages, stream: true }, key);
  expect(again.status).toBe(200);
  expect(contentOf(again)).toBe('kept');
  expect(w.sim.requests.length).toBe(simBefore);
  expect(await retriesAnswered()).toBe(1);
  // Another key, or none, is a new question: upstream, and a branch of its own.
  const other = await post(w.proxy.url, { model: 'oa', messages }, { 'idempotency-key': `other-${t}` });
  expect(contentOf(other)).toBe('kept');
  expect(w.sim.requests.length).toBe(simBefore + 1);
  expect(requestsIn(await logsOf(t))).toHaveLength(2);
});

it('every logged request replays', async () => {
  for (const [id, events] of await readSessions(w)) {
    expect(verifyEvents(events, { file: id }).filter((r) => !r.ok)).toEqual([]);
  }
});
