/**
 * The cache key follows a conversation's lineage: a fork and a side call carry their parent's key,
 * so a fork reads its parent's prefix on the replica that cached it; unrelated ones differ.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/canonical.js';
import { ownFrom, type EventOf, type LogEvent } from '../../src/core/events.js';
import { BLOCK_TOKENS, TOKEN_BYTES, renderPrompt } from '../../src/sim/tokens.js';
import type { WireMessage } from '../../src/sim/request.js';
import { newSessions, openTappedWorld, replayAll, runCli, sessionIds, tag, type Tap, type World } from './harness.js';
import { contentOf, post } from './wire-faults.js';

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

let w: World & { tap: Tap };
beforeAll(async () => {
  w = await openTappedWorld('lineage', { replicas: 8, routing: 'session' });
});
afterAll(async () => {
  await w?.close();
});

/** A system prompt of about 1,600 tokens: above the simulator's 1,024-token cache minimum by itself. */
function longSystem(t: string): string {
  const rules = Array.from({ length: 120 }, (_, i) => `Rule ${i + 1} of ${t}: keep the answer short, name files exactly.`);
  return rules.join('\n');
}

/** One request; returns what the simulator and the tap saw of it, and the reply. */
async function send(messages: Msg[], headers: Record<string, string> = {}) {
  const upstreamBefore = w.sim.requests.length;
  const r = await post(w.proxy.url, { model: 'm', messages }, headers);
  expect(r.status, r.text).toBe(200);
  expect(w.sim.requests.length).toBe(upstreamBefore + 1);
  expect(w.tap.requests.length).toBe(w.sim.requests.length);
  return { reply: contentOf(r), sim: w.sim.requests.at(-1)!, wire: w.tap.requests.at(-1)! };
}

describe('a fork', () => {
  it('reads its parent\'s prefix from the same replica: the parent\'s lineage key, cached tokens covering the shared prefix', async () => {
    const t = tag('fork');
    const before = await sessionIds(w);
    const history: Msg[] = [{ role: 'system', content: longSystem(t) }];
    const parentRequests = [];
    for (let i = 1; i <= 4; i++) {
      history.push({ role: 'user', content: `step ${i} of ${t} [[say done with step ${i}]]` });
      const sent = await send(history);
      parentRequests.push(sent);
      history.push({ role: 'assistant', content: sent.reply });
    }
    const parents = await newSessions(w, before);
    expect(parents.size).toBe(1);
    const [parentId] = [...parents.keys()];
    const key = sha256Hex(parentId!);
    for (const r of parentRequests) {
      expect(r.wire.body.prompt_cache_key).toBe(key);
      expect(r.sim.sessionKey).toBe(key);
    }
    const replica = parentRequests[0]!.sim.replica;
    expect(parentRequests.every((r) => r.sim.replica === replica)).toBe(true);

    // Another client holds the history up to the middle (the second reply), and asks something else.
    const forked: Msg[] = [...history.slice(0, 5), { role: 'user', content: `a different step 3 of ${t} [[say forked]]` }];
    const fork = await send(forked);
    expect(fork.reply).toBe('forked');

    const created = await newSessions(w, new Set([...before, parentId!]));
    expect(created.size).toBe(1);
    const [forkId, forkEvents] = [...created][0]!;
    expect(forkId).not.toBe(parentId);
    const start = forkEvents[0] as EventOf<'session.start'>;
    expect(start.parent?.session).toBe(parentId);
    expect(start.lineage).toBe(parentId);

    expect(fork.wire.body.prompt_cache_key).toBe(key);
    expect(fork.sim.sessionKey).toBe(key);
    expect(fork.sim.replica).toBe(replica);

    // The shared prefix went upstream byte for byte as the parent's third request sent it.
    const shared = (fork.wire.body.messages as WireMessage[]).slice(0, -1);
    expect(shared).toEqual((parentRequests[2]!.wire.body.messages as WireMessage[]).slice(0, -1));
    const sharedBlocks = Math.floor(Buffer.byteLength(renderPrompt([], shared), 'utf8') / (TOKEN_BYTES * BLOCK_TOKENS));
    expect(sharedBlocks * BLOCK_TOKENS).toBeGreaterThanOrEqual(1024);
    expect(fork.sim.cachedTokens).toBeGreaterThan(0);
    expect(fork.sim.cachedTokens).toBeGreaterThanOrEqual(sharedBlocks * BLOCK_TOKENS);
    expect(fork.sim.cachedTokens).toBeLessThan(fork.sim.promptTokens);
  });
});

describe('forks at one opener, run after run', () => {
  it('each copies its parent\'s last request only: the log does not grow with the runs, and each run reads the prefix its parent cached', async () => {
    const t = tag('rerun');
    const tools = [{ type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
    const opener: Msg[] = [{ role: 'system', content: longSystem(t) }, { role: 'user', content: `the task of ${t} [[call read_file {"path":"a"}]]` }];
    const runs: { id: string; events: LogEvent[]; first: { cachedTokens: number; promptTokens: number } }[] = [];
    for (let run = 0; run < 6; run++) {
      // A sub-agent, or the same task run again: the same opener, then the tool loop of its own.
      const before = await sessionIds(w);
      const first = await post(w.proxy.url, { model: 'm', messages: opener, tools });
      expect(first.status, first.text).toBe(200);
      const sim = w.sim.requests.at(-1)!;
      const call = (JSON.parse(first.text) as { choices: { message: { tool_calls: { id: string; function: { name: string; arguments: string } }[] } }[] }).choices[0]!.message.tool_calls[0]!;
      const second = await post(w.proxy.url, {
        model: 'm', tools,
        messages: [...opener, { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function }] }, { role: 'tool', tool_call_id: call.id, content: `run ${run} [[say done ${run}]]` }],
      });
      expect(contentOf(second)).toBe(`done ${run}`);
      const made = await newSessions(w, before);
      expect(made.size).toBe(1);
      const [id, events] = [...made][0]!;
      runs.push({ id, events, first: sim });
    }
    for (const [k, r] of runs.entries()) {
      const reqs = r.events.filter((e) => e.type === 'llm.req');
      const start = r.events[0] as EventOf<'session.start'>;
      if (k === 0) {
        expect(start.parent).toBeUndefined();
        expect(reqs).toHaveLength(2);
        continue;
      }
      // Forked from the run before, at its reply: the one request that reply answered comes along.
      expect(start.parent?.session).toBe(runs[k - 1]!.id);
      expect(reqs, `run ${k}`).toHaveLength(3);
      expect(ownFrom(start)).toBe(reqs[0]!.seq + 1);
      // What the proxy counts as the session's own: its two requests, each answered.
      const rows = await runCli(['stats', r.id, '--json', '--data-dir', join(w.dir, 'data')]);
      expect(rows.code, rows.stderr).toBe(0);
      expect((JSON.parse(rows.stdout) as { requests: { seq: number }[] }).requests.map((q) => q.seq)).toStrictEqual(reqs.slice(1).map((q) => q.seq));
      // Its first request read what its parent's first request wrote.
      expect(r.first.cachedTokens).toBeGreaterThan(1024);
    }
    // The same bytes each run: the sixth log is no larger than the second.
    const sizes = runs.map((r) => r.events.length);
    expect(new Set(sizes.slice(1)).size).toBe(1);
    const replay = await replayAll(w);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  });
});

describe('a side call under the conversation\'s id', () => {
  it('gets a session of its own and carries the conversation\'s key', async () => {
    const t = tag('side');
    const before = await sessionIds(w);
    const named = { 'x-session-id': `conv-${t}` };
    const history: Msg[] = [{ role: 'system', content: longSystem(t) }, { role: 'user', content: `fix the parser of ${t} [[say fixed]]` }];
    const first = await send(history, named);
    const [conversationId] = [...(await newSessions(w, before)).keys()];
    const key = sha256Hex(conversationId!);
    expect(first.sim.sessionKey).toBe(key);

    const title = await send([{ role: 'system', content: 'You write five-word titles.' }, { role: 'user', content: `Title for: fix the parser of ${t} [[say Parser fix]]` }], named);
    expect(title.reply).toBe('Parser fix');
    expect(title.wire.body.prompt_cache_key).toBe(key);
    expect(title.sim.sessionKey).toBe(key);
    expect(title.sim.replica).toBe(first.sim.replica);

    const created = await newSessions(w, before);
    expect(created.size).toBe(2);
    const side = [...created].find(([id]) => id !== conversationId)!;
    const start = side[1][0] as EventOf<'session.start'>;
    expect(start.lineage).toBe(conversationId);
    expect(start.ids).toEqual([`conv-${t}`]);
    // The conversation's own log did not take the side call's messages.
    const conversation: LogEvent[] = created.get(conversationId!)!;
    expect(JSON.stringify(conversation)).not.toContain('five-word titles');

    // The conversation goes on in its own session, under the same key.
    const next = await send([...history, { role: 'assistant', content: first.reply }, { role: 'user', content: 'and the tests [[say tested]]' }], named);
    expect(next.sim.sessionKey).toBe(key);
    expect((await newSessions(w, before)).size).toBe(2);
  });
});

describe('unrelated conversations', () => {
  it('carry different keys', async () => {
    const a = await send([{ role: 'system', content: `You help with ${tag('a')}.` }, { role: 'user', content: 'hello [[say a]]' }]);
    const b = await send([{ role: 'system', content: `You help with ${tag('b')}.` }, { role: 'user', content: 'hello [[say b]]' }]);
    expect(typeof a.wire.body.prompt_cache_key).toBe('string');
    expect(typeof b.wire.body.prompt_cache_key).toBe('string');
    expect(a.wire.body.prompt_cache_key).not.toBe(b.wire.body.prompt_cache_key);
    expect(a.sim.sessionKey).not.toBe(b.sim.sessionKey);
  });
});
