/**
 * Sessions end to end: clients without ids matched by prefix, two clients sharing a first message,
 * a client that compacts its history under an explicit id, and two concurrent requests extending
 * one prefix (a fork). Every log replays at the end, and a tampered digest fails the replay.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { newSessions, replayAll, runCli, sessionIds, sessionsDir, startWorld, tag, until, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld({ sim: { requireReasoning: true } });
});
afterAll(async () => {
  await w?.close();
});

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

/** Send, then append the reply to `messages` as a client that drops reasoning would. */
async function turn(messages: Msg[], opts: { model?: string; headers?: Record<string, string> } = {}): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const r = await w.client.chat.completions.create({ model: opts.model ?? 'ds', messages, tools: TOOLS }, { headers: opts.headers });
  const m = r.choices[0]!.message;
  messages.push({ role: 'assistant', content: m.content, ...(m.tool_calls === undefined ? {} : { tool_calls: m.tool_calls }) } as Msg);
  return r;
}

function clientTexts(events: readonly LogEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'client.msg' && e.msg.role === 'user' && typeof e.msg.content === 'string' ? [e.msg.content] : []));
}

describe('clients without ids', () => {
  it('two sequential requests of one conversation land in one log', async () => {
    const before = await sessionIds(w);
    const t = tag('seq');
    const messages: Msg[] = [{ role: 'system', content: `sys ${t}` }, { role: 'user', content: `${t} first [[say one]]` }];
    await turn(messages);
    messages.push({ role: 'user', content: 'second [[say two]]' });
    await turn(messages);
    messages.push({ role: 'user', content: 'third [[call read_file {"path":"x"}]]' });
    const r = await turn(messages);
    messages.push({ role: 'tool', tool_call_id: r.choices[0]!.message.tool_calls![0]!.id, content: 'x [[say done]]' });
    await turn(messages);
    const created = await newSessions(w, before);
    expect(created.size).toBe(1);
    const events = [...created.values()][0]!;
    expect(events.filter((e) => e.type === 'llm.req')).toHaveLength(4);
    expect(events.filter((e) => e.type === 'llm.resp')).toHaveLength(4);
    expect(events.some((e) => e.type === 'client.rewrite')).toBe(false);
    // Nothing the client sent twice was logged twice.
    expect(clientTexts(events)).toEqual([`${t} first [[say one]]`, 'second [[say two]]', 'third [[call read_file {"path":"x"}]]']);
  });

  it('two clients with the same first message and different continuations are two sessions', async () => {
    const before = await sessionIds(w);
    const t = tag('two');
    const start = (): Msg[] => [{ role: 'system', content: `sys ${t}` }, { role: 'user', content: `${t} hello [[say hi]]` }];
    const a = start();
    const b = start();
    await turn(a);
    await turn(b);
    for (let i = 0; i < 3; i++) {
      a.push({ role: 'user', content: `a${i} [[say a${i}]]` });
      await turn(a);
      b.push({ role: 'user', content: `b${i} [[say b${i}]]` });
      await turn(b);
    }
    const created = await newSessions(w, before);
    expect(created.size).toBe(2);
    const logs = [...created.values()].map(clientTexts);
    const ofA = logs.find((texts) => texts.includes('a0 [[say a0]]'))!;
    const ofB = logs.find((texts) => texts.includes('b0 [[say b0]]'))!;
    expect(ofA).toBeDefined();
    expect(ofB).toBeDefined();
    expect(ofA).not.toBe(ofB);
    expect(ofA.some((x) => x.startsWith('b'))).toBe(false);
    expect(ofB.some((x) => x.startsWith('a'))).toBe(false);
    expect(ofA.filter((x) => x.startsWith('a'))).toEqual(['a0 [[say a0]]', 'a1 [[say a1]]', 'a2 [[say a2]]']);
    expect(ofB.filter((x) => x.startsWith('b'))).toEqual(['b0 [[say b0]]', 'b1 [[say b1]]', 'b2 [[say b2]]']);
  });
});

describe('a client that compacts its history', () => {
  it('gets a client.rewrite and stays in its session; the reply it kept gets its reasoning back', async () => {
    const before = await sessionIds(w);
    const t = tag('compact');
    const headers = { 'x-session-id': `sess-${t}` };
    const system = `sys ${t}`;
    const messages: Msg[] = [{ role: 'system', content: system }, { role: 'user', content: `${t} start [[say started]]` }];
    await turn(messages, { headers });
    for (let i = 0; i < 3; i++) {
      messages.push({ role: 'user', content: `step ${i} [[call read_file {"path":"f${i}"}]]` });
      const r = await turn(messages, { headers });
      messages.push({ role: 'tool', tool_call_id: r.choices[0]!.message.tool_calls![0]!.id, content: `file ${i} [[say read ${i}]]` });
      await turn(messages, { headers });
    }
    messages.push({ role: 'user', content: 'one more [[call read_file {"path":"g"}]]' });
    const last = await turn(messages, { headers });
    const callId = last.choices[0]!.message.tool_calls![0]!.id;
    const created = await newSessions(w, before);
    expect(created.size).toBe(1);
    const [id] = [...created.keys()];

    // Compaction: system + a summary + the latest messages (the last reply and its tool result).
    const compacted: Msg[] = [
      { role: 'system', content: system },
      { role: 'user', content: 'Summary of the conversation so far: read f0, f1, f2.' },
      messages.at(-1)!,
      { role: 'tool', tool_call_id: callId, content: 'g content [[say after compaction]]' },
    ];
    const r = await turn(compacted, { headers });
    expect(r.choices[0]!.message.content).toBe('after compaction');
    compacted.push({ role: 'user', content: 'and then [[say later]]' });
    await turn(compacted, { headers });

    const after = await newSessions(w, before);
    expect([...after.keys()]).toEqual([id]);
    const events = after.get(id!)!;
    const rewrites = events.filter((e) => e.type === 'client.rewrite');
    expect(rewrites).toHaveLength(1);
    // The compacted request is a rewrite; the one after it simply appends.
    const firstUser = events.find((e) => e.type === 'client.msg' && e.msg.role === 'user')!;
    expect(rewrites[0]!.from_seq).toBe(firstUser.seq);
    expect(clientTexts(events.filter((e) => e.seq > rewrites[0]!.seq))).toEqual(['Summary of the conversation so far: read f0, f1, f2.', 'and then [[say later]]']);
    // The simulator demanded the kept reply's reasoning back (requireReasoning) and got it.
    expect(w.sim.requests.at(-2)!.status).toBe(200);
    expect(w.sim.requests.at(-2)!.reasoning.returned).toBeGreaterThanOrEqual(1);
  });
});

describe('a client without an id that compacts its history', () => {
  it('is found by the reply it kept: a rewrite in the same session', async () => {
    const before = await sessionIds(w);
    const t = tag('compact-noid');
    const system = `sys ${t}`;
    const messages: Msg[] = [{ role: 'system', content: system }, { role: 'user', content: `${t} start [[say started]]` }];
    await turn(messages);
    messages.push({ role: 'user', content: 'more [[call read_file {"path":"h"}]]' });
    const last = await turn(messages);
    const compacted: Msg[] = [
      { role: 'system', content: system },
      { role: 'user', content: `Summary: ${t} started.` },
      messages.at(-1)!,
      { role: 'tool', tool_call_id: last.choices[0]!.message.tool_calls![0]!.id, content: 'h content [[say compacted]]' },
    ];
    expect((await turn(compacted)).choices[0]!.message.content).toBe('compacted');
    const created = await newSessions(w, before);
    expect(created.size).toBe(1);
    const events = [...created.values()][0]!;
    expect(events.filter((e) => e.type === 'client.rewrite')).toHaveLength(1);
    expect(w.sim.requests.at(-1)!.reasoning.returned).toBeGreaterThanOrEqual(1);
  });
});

describe('concurrent requests extending one prefix', () => {
  it('make a fork: a second session whose session.start names its parent', async () => {
    const before = await sessionIds(w);
    const t = tag('fork');
    const base: Msg[] = [{ role: 'system', content: `sys ${t}` }, { role: 'user', content: `${t} base [[say based]]` }];
    await turn(base);
    const [parentId] = [...(await newSessions(w, before)).keys()];
    const slow = [...base, { role: 'user', content: 'slow branch [[slow 300]] [[think hm]] [[say slow]]' } as Msg];
    const fast = [...base, { role: 'user', content: 'fast branch [[say fast]]' } as Msg];
    const slowReply = w.client.chat.completions.create({ model: 'ds', messages: slow, tools: TOOLS });
    // The slow request is in flight (its upstream call has arrived) before the fast one is sent.
    await until(() => w.sim.requests.some((r) => r.receivedAt > 0 && r.finishedAt === null && r.status === 200));
    const fastReply = await w.client.chat.completions.create({ model: 'ds', messages: fast, tools: TOOLS });
    expect(fastReply.choices[0]!.message.content).toBe('fast');
    expect((await slowReply).choices[0]!.message.content).toBe('slow');

    const created = await newSessions(w, before);
    expect(created.size).toBe(2);
    const parent = created.get(parentId!)!;
    const [childId, child] = [...created].find(([id]) => id !== parentId)!;
    expect(childId).not.toBe(parentId);
    const start = child[0]!;
    expect(start.type).toBe('session.start');
    const divergence = parent.find((e) => e.type === 'client.msg' && e.msg.role === 'user' && e.msg.content === 'slow branch [[slow 300]] [[think hm]] [[say slow]]')!;
    expect(start.type === 'session.start' && start.parent).toEqual({ session: parentId, seq: divergence.seq });
    expect(clientTexts(parent)).toContain('slow branch [[slow 300]] [[think hm]] [[say slow]]');
    expect(clientTexts(parent)).not.toContain('fast branch [[say fast]]');
    expect(clientTexts(child)).toEqual([`${t} base [[say based]]`, 'fast branch [[say fast]]']);
    // The fork shares the parent's prefix events byte for byte (same seqs, same bodies).
    for (const e of child.filter((x) => x.seq < divergence.seq && x.type !== 'session.start')) {
      const { ts: _a, ...mine } = e;
      const { ts: _b, ...theirs } = parent.find((p) => p.seq === e.seq)!;
      expect(mine).toEqual(theirs);
    }
  });
});

describe('concurrent twins', () => {
  it('the conversation of a request in flight, sent again: it runs beside it in a fork, not queued', async () => {
    const before = await sessionIds(w);
    const t = tag('twins');
    const messages: Msg[] = [{ role: 'system', content: `sys ${t}` }, { role: 'user', content: `${t} [[slow 100]] [[think hm]] [[say twin]]` }];
    const upstreamBefore = w.sim.requests.length;
    const a = w.client.chat.completions.create({ model: 'ds', messages, tools: TOOLS });
    await until(() => w.sim.requests.length > upstreamBefore);
    const b = await w.client.chat.completions.create({ model: 'ds', messages, tools: TOOLS });
    expect(b.choices[0]!.message.content).toBe('twin');
    expect((await a).choices[0]!.message.content).toBe('twin');
    const [first, second] = w.sim.requests.slice(upstreamBefore);
    // The second did not queue behind the first.
    expect(second!.receivedAt).toBeLessThan(first!.finishedAt!);
    const created = await newSessions(w, before);
    expect(created.size).toBe(2);
    const starts = [...created.values()].map((events) => events[0] as EventOf<'session.start'>);
    const parentId = [...created.keys()].find((_, i) => starts[i]!.parent === undefined);
    expect(starts.map((s) => s.parent?.session)).toContain(parentId);
    for (const events of created.values()) {
      expect(clientTexts(events)).toEqual([`${t} [[slow 100]] [[think hm]] [[say twin]]`]);
      expect(events.filter((e): e is EventOf<'llm.resp'> => e.type === 'llm.resp').map((e) => e.reply.content)).toEqual(['twin']);
    }
  });
});

describe('replay', () => {
  it('every request of every session replays with the CLI; a tampered digest fails it', async () => {
    const ok = await replayAll(w);
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.stdout) as { requests: number; failed: number };
    expect(report.failed).toBe(0);
    expect(report.requests).toBeGreaterThanOrEqual(20);

    // Tamper with one digest (then put the log back).
    const ids = [...(await sessionIds(w))];
    const file = join(sessionsDir(w), `${ids[0]}.jsonl`);
    const original = await readFile(file, 'utf8');
    const lines = original.split('\n');
    const at = lines.findIndex((l) => l.includes('"type":"llm.req"'));
    const digest = /"digest":"([0-9a-f]{64})"/.exec(lines[at]!)![1]!;
    const flipped = (digest[0] === '0' ? '1' : '0') + digest.slice(1);
    lines[at] = lines[at]!.replace(digest, flipped);
    await writeFile(file, lines.join('\n'));
    try {
      const bad = await runCli(['replay', '--all', '--data-dir', join(w.dir, 'data')]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain(flipped);
    } finally {
      await writeFile(file, original);
    }
    expect((await replayAll(w)).code).toBe(0);
  });
});
