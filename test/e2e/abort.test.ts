/**
 * A client that goes away mid-stream: the proxy closes its upstream call at once, and logs the
 * partial reply as aborted; the session goes on as if that reply never happened.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type OpenAI from 'openai';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { newSessions, readSessions, replayAll, sessionIds, startWorld, tag, until, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld({ sim: { requireReasoning: true } });
});
afterAll(async () => {
  await w?.close();
});

// The upstream sends a token every 200 ms: closing within two of its intervals is prompt, and
// leaves room for a loaded machine's scheduling.
it('the upstream call closes within 400 ms of the abort (two of its token intervals), and the log holds the partial reply, aborted', async () => {
  const before = await sessionIds(w);
  const t = tag('abort');
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    { role: 'user', content: `${t} [[slow 200]] [[think short]] [[len 200]]` },
  ];
  const controller = new AbortController();
  const stream = await w.client.chat.completions.create({ model: 'ds', stream: true, messages }, { signal: controller.signal });
  let seen = '';
  let abortedAt = 0;
  // The SDK ends the iteration quietly when its signal aborts.
  for await (const chunk of stream) {
    seen += chunk.choices[0]?.delta.content ?? '';
    if (seen.length >= 48) {
      abortedAt = w.sim.now();
      controller.abort();
      break;
    }
  }
  expect(seen.length).toBeGreaterThanOrEqual(48);

  const record = w.sim.requests.at(-1)!;
  await until(() => record.closedEarly, 1000);
  expect(record.closedAt! - abortedAt).toBeLessThan(400);
  expect(record.finishedAt).toBeNull();

  const resp = await until(async () => {
    const created = await newSessions(w, before);
    const events = [...created.values()][0] ?? [];
    return events.find((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp');
  }, 2000);
  expect(resp.aborted).toBe(true);
  const partial = resp.reply.content ?? '';
  expect(partial.length).toBeGreaterThanOrEqual(seen.length);
  expect(partial.startsWith(seen)).toBe(true);
  // 200 tokens of 4-byte filler: the reply was far from complete.
  expect(partial.length).toBeLessThan(800);
  expect(resp.reply.thinking).toBe('short');
});

it('the session goes on: the aborted reply is not in the next request, and the client retries in the same log', async () => {
  const before = await sessionIds(w);
  const t = tag('retry');
  const first: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: `${t} hello [[say hi]]` }];
  const hi = await w.client.chat.completions.create({ model: 'ds', messages: first });
  const messages = [...first, { role: 'assistant' as const, content: hi.choices[0]!.message.content }, { role: 'user' as const, content: 'long one [[slow 50]] [[len 200]]' }];
  const controller = new AbortController();
  const stream = await w.client.chat.completions.create({ model: 'ds', stream: true, messages }, { signal: controller.signal });
  for await (const chunk of stream) {
    if ((chunk.choices[0]?.delta.content ?? '') === '') continue;
    controller.abort();
    break;
  }
  // The client asks again as soon as the proxy has let go of the upstream call, with another last
  // message.
  const aborted = w.sim.requests.at(-1)!;
  await until(() => aborted.closedEarly);
  const again = await w.client.chat.completions.create({ model: 'ds', messages: [...messages.slice(0, 2), { role: 'user', content: 'short one [[say ok]]' }] });
  expect(again.choices[0]!.message.content).toBe('ok');
  const created = await newSessions(w, before);
  expect(created.size).toBe(1);
  const events: LogEvent[] = [...created.values()][0]!;
  expect(events.filter((e) => e.type === 'llm.resp').map((e) => (e as EventOf<'llm.resp'>).aborted === true)).toEqual([false, true, false]);
  // The retry replaced the abandoned message: a rewrite from it, not a fork (even when the retry
  // arrives before the aborted request has finished logging).
  const long = events.find((e) => e.type === 'client.msg' && e.msg.content === 'long one [[slow 50]] [[len 200]]')!;
  expect(events.filter((e) => e.type === 'client.rewrite').map((e) => (e as EventOf<'client.rewrite'>).from_seq)).toEqual([long.seq]);
  expect(w.sim.requests.at(-1)!.status).toBe(200);
});

it('a client that leaves while its request waits for the session: no upstream call is made for it', async () => {
  const t = tag('queued');
  const messages = [{ role: 'user' as const, content: `${t} [[slow 100]] [[think x]] [[say first]]` }];
  const upstreamBefore = w.sim.requests.length;
  const first = w.client.chat.completions.create({ model: 'ds', messages });
  await until(() => w.sim.requests.length > upstreamBefore);
  // A request extending the running one's conversation waits for it to finish; its client gives
  // up meanwhile.
  const controller = new AbortController();
  const second = fetch(`${w.proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
    body: JSON.stringify({ model: 'ds', messages: [...messages, { role: 'user', content: 'and more' }] }),
  }).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 100));
  controller.abort();
  expect(await second).toBeInstanceOf(Error);
  expect((await first).choices[0]!.message.content).toBe('first');
  await new Promise((r) => setTimeout(r, 200));
  expect(w.sim.requests.length).toBe(upstreamBefore + 1);
  // Every reply logged for this conversation is either the one the first client got, or aborted.
  const logs = [...(await readSessions(w)).values()].filter((events) => JSON.stringify(events).includes(t));
  const full = logs.flat().filter((e) => e.type === 'llm.resp' && e.aborted !== true);
  expect(full).toHaveLength(1);
});

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 });
});
