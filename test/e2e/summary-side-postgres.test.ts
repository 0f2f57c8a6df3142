/**
 * `proxy summary` and side requests on PostgreSQL (issue 31, item 6). Two running replicas on one
 * database carry a conversation, alternating; `proxy summary add --store postgres` writes into the
 * session they hold in memory, and the next request on either replica sends the summary in place
 * of its span (a shorter prompt upstream), `revoke` brings the span back; an opencode compaction
 * prompt through the other replica reads the conversation's prefix in a side session and leaves
 * the conversation's log alone; `proxy replay --all --store postgres` verifies every digest.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { PgStore } from '../../src/store/pg/store.js';
import { buildAt } from '../../src/window/index.js';
import { usePgWorld } from './pg-world.js';
import { runCli } from './harness.js';
import { replicaConfig } from './replica-procs.js';

const pgw = usePgWorld('pp-summary-pg-');

type Msg = { role: 'system' | 'user' | 'assistant'; content: string };
const COMPACTION = 'Provide a detailed prompt for continuing our conversation above.\nFocus on information that would be helpful for continuing the conversation, including what we did, what we\'re doing, which files we\'re working on, and what we\'re going to do next.';
const SUMMARY = 'The agent read the loader, the parser and their tests, and found the bug in the parser.';

async function send(proxy: RunningProxy, messages: Msg[], headers: Record<string, string>) {
  const before = pgw.sim.requests.length;
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'oa', messages }),
  });
  const body = await res.json() as { choices?: { message: { content: string } }[] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(pgw.sim.requests.length).toBe(before + 1);
  return { reply: body.choices![0]!.message.content, up: pgw.sim.requests.at(-1)! };
}

function replays(events: readonly LogEvent[]): number {
  const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
  for (const r of reqs) expect(buildAt(events, r.seq).digest).toBe(r.digest);
  return reqs.length;
}

function sentContents(events: readonly LogEvent[]): string[] {
  const req = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req').at(-1)!;
  return buildAt(events, req.seq).request.messages.map((m) => ('content' in m && typeof m.content === 'string' ? m.content : ''));
}

describe('proxy summary and side requests on PostgreSQL', () => {
  it('a summary added and revoked by the CLI reaches both running replicas; a compaction prompt reads the prefix; replay passes', async () => {
    const env = 'PP_TEST_SUMMARY_DB';
    process.env[env] = await pgw.server.createDatabase('summary');
    const proxies: RunningProxy[] = [];
    try {
      for (const name of ['sa', 'sb']) {
        const path = await replicaConfig(pgw.dir, name, 0, env, pgw.sim.urlFor('openai'));
        proxies.push(await startProxy(loadConfig({ path, env: process.env, cwd: pgw.dir })));
      }
      const [a, b] = proxies as [RunningProxy, RunningProxy];
      const named = { 'x-session-id': 'conv-summary-pg' };
      const system = Array.from({ length: 120 }, (_, i) => `Rule ${i + 1}: keep the answer short, name files exactly.`).join('\n');
      const history: Msg[] = [{ role: 'system', content: system }];
      let last;
      for (let i = 1; i <= 6; i++) {
        history.push({ role: 'user', content: `step ${i}: ${'context words '.repeat(150)} [[say done with step ${i}]]` });
        last = await send(i % 2 === 1 ? a : b, history, named);
        history.push({ role: 'assistant', content: last.reply });
      }
      const store = await PgStore.connect(process.env[env]!);
      try {
        const ids = await store.listSessions();
        expect(ids).toHaveLength(1);
        const id = ids[0]!;
        let events = (await store.read(id)).events;
        const entries = events.filter((e) => (e.type === 'client.msg' && e.head !== true && e.msg.role !== 'system') || (e.type === 'llm.resp' && e.aborted !== true));
        // Steps 1 and 2 (their questions and answers) become one summary.
        const [from, to] = [entries[0]!.seq, entries[3]!.seq];
        const text = join(pgw.dir, 'summary.txt');
        await writeFile(text, SUMMARY + '\n');
        const added = await runCli(['summary', 'add', id, '--from', String(from), '--to', String(to), '--file', text, '--store', 'postgres', '--url-env', env]);
        expect(added.stderr).toBe('');
        expect(added.code).toBe(0);
        events = (await store.read(id)).events;
        const summary = events.at(-1) as EventOf<'summary.add'>;
        expect(summary).toMatchObject({ type: 'summary.add', from, to, text: SUMMARY });

        // Both replicas hold the session in memory; each folds the summary in on its next turn.
        const fullPrompt = last!.up.promptTokens;
        history.push({ role: 'user', content: `step 7 [[say done with step 7]]` });
        const seventh = await send(a, history, named);
        history.push({ role: 'assistant', content: seventh.reply });
        expect(seventh.up.promptTokens).toBeLessThan(fullPrompt - 300);
        events = (await store.read(id)).events;
        expect(sentContents(events)).toContain(SUMMARY);
        history.push({ role: 'user', content: `step 8 [[say done with step 8]]` });
        const eighth = await send(b, history, named);
        history.push({ role: 'assistant', content: eighth.reply });
        expect(eighth.up.promptTokens).toBeLessThan(fullPrompt - 300);

        const revoked = await runCli(['summary', 'revoke', id, String(summary.seq), '--store', 'postgres', '--url-env', env]);
        expect(revoked.code, revoked.stderr).toBe(0);
        expect((await runCli(['summary', 'revoke', id, String(summary.seq), '--store', 'postgres', '--url-env', env])).stderr).toContain('already revoked');
        history.push({ role: 'user', content: `step 9 [[say done with step 9]]` });
        const ninth = await send(b, history, named);
        history.push({ role: 'assistant', content: ninth.reply });
        expect(ninth.up.promptTokens).toBeGreaterThan(fullPrompt);
        events = (await store.read(id)).events;
        expect(sentContents(events)).not.toContain(SUMMARY);
        expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);

        // opencode's compaction call through the other replica: a side session on the prefix.
        const logBefore = JSON.stringify(events);
        const compaction = await send(a, [
          { role: 'system', content: 'You are a helpful AI assistant tasked with summarizing conversations.' },
          ...history.slice(1), { role: 'user', content: `${COMPACTION} [[say the summary]]` },
        ], named);
        expect(compaction.reply).toBe('the summary');
        expect(compaction.up.cachedTokens).toBeGreaterThanOrEqual(0.9 * ninth.up.promptTokens);
        expect(JSON.stringify((await store.read(id)).events)).toBe(logBefore);
        const all = await store.listSessions();
        expect(all).toHaveLength(2);
        const sideId = all.find((s) => s !== id)!;
        const side = (await store.read(sideId)).events;
        expect(side[0]).toMatchObject({ type: 'session.start', side: { kind: 'compaction', client: 'opencode' }, parent: { session: id } });
        expect(replays(side)).toBeGreaterThan(1);

        // The conversation goes on, on the other replica, in its own session.
        history.push({ role: 'user', content: `step 10 [[say done with step 10]]` });
        const tenth = await send(b, history, named);
        expect(tenth.up.cachedTokens).toBeGreaterThanOrEqual(0.9 * ninth.up.promptTokens);
        expect(await store.listSessions()).toHaveLength(2);
        events = (await store.read(id)).events;
        expect(events.filter((e) => e.type === 'llm.req')).toHaveLength(10);
        expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
        expect(replays(events)).toBe(10);
      } finally {
        await store.close();
      }
    } finally {
      for (const p of proxies) await p.close();
    }
    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ failed: 0 });
  }, 120_000);
});
