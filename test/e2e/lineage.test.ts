/**
 * The cache key follows a conversation's lineage: a fork and a side call carry their parent's key,
 * so a fork reads its parent's prefix on the replica that cached it; unrelated ones differ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/canonical.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { BLOCK_TOKENS, TOKEN_BYTES, renderPrompt } from '../../src/sim/tokens.js';
import type { WireMessage } from '../../src/sim/request.js';
import { newSessions, openTappedWorld, sessionIds, tag, type Tap, type World } from './harness.js';
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
