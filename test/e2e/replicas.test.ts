/**
 * Several replicas, one conversation (docs/scaling.md): two proxies on one PostgreSQL (a real
 * temporary cluster), an agent whose requests alternate between them through the official
 * `openai` client. One session, no fork, no rewrite, prefix reads at least 99% of what the
 * unchanged prefix allows, and every digest replays (`proxy replay --all --store postgres`);
 * `proxy migrate` moves the log to files and back, line for line, replaying every digest. Then
 * with two `proxy serve` processes: one is killed (SIGKILL) mid-stream, the other answers the
 * client's retry and carries the same session on. An AI SDK agent's item references are read on
 * whichever replica takes the step.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idealCached, runAgent } from '../../bench/agent.js';
import { loadConfig } from '../../src/config/load.js';
import type { EventOf, LogEvent } from '../../src/core/events.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { PgStore } from '../../src/store/pg/store.js';
import { usePgWorld } from './pg-world.js';
import { freePort, replicaConfig } from './replica-procs.js';
import { runCli } from './harness.js';

const pgw = usePgWorld('pp-replicas-');

/** A fetch that sends each request to the next of `origins` in turn. */
function alternating(origins: readonly string[], counts: number[]): typeof fetch {
  let n = 0;
  return (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const i = n++ % origins.length;
    counts[i]!++;
    const target = new URL(url.pathname + url.search, origins[i]);
    return fetch(target, init);
  };
}

async function eventsOf(store: PgStore): Promise<Map<string, LogEvent[]>> {
  const out = new Map<string, LogEvent[]>();
  for (const id of await store.listSessions()) out.set(id, (await store.read(id)).events);
  return out;
}

/** A new database named by `$env`, two in-process replicas on it, and a store to check it with. */
async function twoReplicas(env: string, db: string, names: readonly string[]): Promise<{ proxies: RunningProxy[]; check: PgStore }> {
  process.env[env] = await pgw.server.createDatabase(db);
  const proxies: RunningProxy[] = [];
  for (const name of names) {
    const path = await replicaConfig(pgw.dir, name, 0, env, pgw.sim.urlFor('openai'));
    proxies.push(await startProxy(loadConfig({ path, env: process.env, cwd: pgw.dir })));
  }
  return { proxies, check: await PgStore.connect(process.env[env]!) };
}

describe('two replicas on one PostgreSQL', () => {
  it('an alternating agent conversation stays one session, caches as on one proxy, replays, and migrates both ways', async () => {
    const env = 'PP_TEST_REPLICAS_DB';
    const { proxies, check } = await twoReplicas(env, 'replicas', ['a', 'b']);
    try {
      const counts = [0, 0];
      const client = new OpenAI({ baseURL: 'http://replicas.invalid/v1', apiKey: 'test', maxRetries: 0, fetch: alternating(proxies.map((p) => p.url), counts) });
      const run = await runAgent(client, 'oa', { requests: 14, stream: true, resultBytes: 3000 });
      expect(counts).toEqual([7, 7]);

      const sessions = await eventsOf(check);
      expect([...sessions.keys()]).toHaveLength(1);
      const events = [...sessions.values()][0]!;
      expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
      expect(events.filter((e) => e.type === 'llm.req')).toHaveLength(14);
      expect(events.filter((e) => e.type === 'llm.resp' && e.aborted !== true)).toHaveLength(14);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const cached = run.steps.reduce((n, s) => n + (s.cached_tokens ?? 0), 0);
      const ideal = idealCached(run.steps);
      expect(ideal).toBeGreaterThan(10_000);
      expect(cached).toBeGreaterThanOrEqual(Math.floor(ideal * 0.99));
    } finally {
      for (const p of proxies) await p.close();
    }

    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(replay.stderr).toBe('');
    expect(JSON.parse(replay.stdout)).toMatchObject({ requests: 14, failed: 0 });
    const listed = await runCli(['sessions', '--json', '--store', 'postgres', '--url-env', env]);
    expect(JSON.parse(listed.stdout).sessions).toHaveLength(1);
    const sid = JSON.parse(listed.stdout).sessions[0].id as string;
    const stats = await runCli(['stats', sid, '--json', '--store', 'postgres', '--url-env', env]);
    expect(JSON.parse(stats.stdout).requests).toHaveLength(14);
    const lastReq = (await check.read(sid)).events.findLast((e) => e.type === 'llm.req')!.seq;
    const diff = await runCli(['diff', sid, String(lastReq), '--json', '--store', 'postgres', '--url-env', env]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(JSON.parse(diff.stdout)).toMatchObject({ seq: lastReq, cause: 'none' });
    // Without the URL's variable set, a clear error, not a connection attempt somewhere.
    const unset = await runCli(['sessions', '--store', 'postgres', '--url-env', 'PP_TEST_UNSET_VARIABLE']);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('$PP_TEST_UNSET_VARIABLE, which is not set');

    // To files: the same lines, every digest replayed from the files.
    const files = join(pgw.dir, 'moved');
    const out = await runCli(['migrate', '--from', 'postgres', '--to', 'files', '--data-dir', files, '--url-env', env, '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ sessions: 1, moved: 1, requests: 14, failed: [] });
    const [id] = await check.listSessions();
    const fileText = await readFile(join(files, 'sessions', `${id}.jsonl`), 'utf8');
    expect(fileText).toBe((await check.exportLines(id!)).map((l) => `${l}\n`).join(''));
    expect((await runCli(['replay', '--all', '--data-dir', files])).code).toBe(0);
    // Again: already there, nothing written.
    expect(JSON.parse((await runCli(['migrate', '--from', 'postgres', '--to', 'files', '--data-dir', files, '--url-env', env, '--json'])).stdout)).toMatchObject({ moved: 0, skipped: 1 });

    // And back into an empty database.
    const back = 'PP_TEST_REPLICAS_BACK';
    process.env[back] = await pgw.server.createDatabase('back');
    const home = await runCli(['migrate', '--from', 'files', '--to', 'postgres', '--data-dir', files, '--url-env', back, '--json']);
    expect(JSON.parse(home.stdout)).toMatchObject({ moved: 1, requests: 14, failed: [] });
    const backStore = await PgStore.connect(process.env[back]!);
    expect(await backStore.exportLines(id!)).toEqual(await check.exportLines(id!));
    expect(await backStore.readIndex(id!)).toEqual(await check.readIndex(id!));
    await backStore.close();
    await check.close();
  }, 120_000);

  it('an AI SDK agent whose item references name replies the other replica logged: one session, each step answered', async () => {
    const { proxies, check } = await twoReplicas('PP_TEST_REPLICAS_REFS', 'refs', ['ra', 'rb']);
    try {
      const counts = [0, 0];
      const openai = createOpenAI({ baseURL: 'http://replicas.invalid/v1', apiKey: 'test', fetch: alternating(proxies.map((p) => p.url), counts) });
      const steps = 5;
      const read = tool({
        description: 'Read a file.',
        inputSchema: z.object({ path: z.string() }),
        execute: async ({ path }) => {
          const n = Number(path) + 1;
          return `file ${path} [[say step ${n}]]${n < steps - 1 ? ` [[call read_file {"path":"${n}"}]]` : ''}`;
        },
      });
      // openai(model) speaks Responses with store true: from the second step on it names the
      // earlier replies' text by item_reference, and every other step goes to the other replica.
      const r = await generateText({
        model: openai('oa'), maxRetries: 0, stopWhen: stepCountIs(steps + 1), tools: { read_file: read },
        system: 'You read files for refs-replicas.', prompt: 'refs-replicas [[say step 0]] [[call read_file {"path":"0"}]]',
      });
      expect(r.steps.map((s) => s.text)).toStrictEqual(Array.from({ length: steps }, (_, k) => `step ${k}`));
      expect(r.steps.slice(1).every((s) => JSON.stringify(s.request.body).includes('"item_reference"'))).toBe(true);
      expect(counts).toEqual([3, 2]);
      const sessions = await eventsOf(check);
      expect([...sessions.keys()]).toHaveLength(1);
      const events = [...sessions.values()][0]!;
      expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
      expect(events.filter((e) => e.type === 'llm.resp' && e.aborted !== true)).toHaveLength(steps);
    } finally {
      for (const p of proxies) await p.close();
      await check.close();
    }
  }, 60_000);

  it('an Idempotency-Key repeated on the other replica is answered from the log there; another key goes upstream', async () => {
    const { proxies, check } = await twoReplicas('PP_TEST_REPLICAS_IDEM', 'idem', ['ia', 'ib']);
    try {
      const [a, b] = proxies as [RunningProxy, RunningProxy];
      const messages = [{ role: 'system', content: 'You answer idem-replicas.' }, { role: 'user', content: 'idem-replicas [[say once]]' }];
      const ask = async (p: RunningProxy, key: string, stream = false) => {
        const res = await fetch(`${p.url}/v1/chat/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ model: 'oa', messages, stream }),
        });
        expect(res.status).toBe(200);
        return res.text();
      };
      const answered = async (p: RunningProxy) => {
        const line = (await (await fetch(`${p.url}/metrics`)).text()).split('\n').find((l) => l.startsWith('proxy_retries_answered_total{'));
        return line === undefined ? 0 : Number(line.split(' ').at(-1));
      };
      expect(await ask(a, 'idem-1')).toContain('once');
      const upstreamBefore = pgw.sim.requests.length;
      // B never saw the key: it reads the answered request's digest of it from the database.
      expect(await ask(b, 'idem-1', true)).toContain('once');
      expect(pgw.sim.requests.length).toBe(upstreamBefore);
      expect(await answered(b)).toBe(1);
      expect(await ask(a, 'idem-1')).toContain('once');
      expect(pgw.sim.requests.length).toBe(upstreamBefore);
      expect(await answered(a)).toBe(1);
      expect(await ask(b, 'idem-2')).toContain('once');
      expect(pgw.sim.requests.length).toBe(upstreamBefore + 1);
    } finally {
      for (const p of proxies) await p.close();
    }
    // The other key's question is a branch: a fork, which starts with copies of its parent's events.
    const requests = [...(await eventsOf(check)).values()].flatMap((events) => {
      const start = events[0] as EventOf<'session.start'>;
      return events.filter((e) => e.type === 'llm.req' && e.seq >= (start.parent?.seq ?? 0));
    });
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests)).not.toContain('idem-1');
    await check.close();
  }, 60_000);

  it('kill -9 of one replica mid-stream: the other answers the retry and the session goes on, nothing answered is lost', async () => {
    const env = 'PP_TEST_KILL_DB';
    process.env[env] = await pgw.server.createDatabase('kill');
    const children: ChildProcess[] = [];
    const origins: string[] = [];
    const main = join(process.cwd(), 'dist', 'cli', 'main.js');
    const check = await PgStore.connect(process.env[env]!);
    try {
      for (const name of ['ka', 'kb']) {
        const port = await freePort();
        const path = await replicaConfig(pgw.dir, name, port, env, pgw.sim.urlFor('openai'));
        const child = spawn(process.execPath, [main, 'serve', '--config', path], { stdio: ['ignore', 'ignore', 'pipe'], env: process.env });
        children.push(child);
        origins.push(`http://127.0.0.1:${port}`);
      }
      for (const origin of origins) {
        for (let i = 0; ; i++) {
          const ok = await fetch(`${origin}/healthz`).then((r) => r.ok, () => false);
          if (ok) break;
          if (i > 200) throw new Error(`${origin} did not come up`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const [a, b] = origins.map((o) => new OpenAI({ baseURL: `${o}/v1`, apiKey: 'test', maxRetries: 0 }));
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'You are a careful coding agent.' },
        { role: 'user', content: 'Start. [[say first answer]]' },
      ];
      const first = await a!.chat.completions.create({ model: 'oa', messages });
      messages.push({ role: 'assistant', content: first.choices[0]!.message.content });
      messages.push({ role: 'user', content: 'Second. [[say second answer]]' });
      const second = await b!.chat.completions.create({ model: 'oa', messages });
      messages.push({ role: 'assistant', content: second.choices[0]!.message.content });
      messages.push({ role: 'user', content: 'Third, slowly. [[slow 150]] [[len 200]]' });

      // Replica a streams the third answer; it dies after the first chunks.
      const stream = await a!.chat.completions.create({ model: 'oa', messages, stream: true });
      let chunks = 0;
      await expect((async () => {
        for await (const _ of stream) {
          if (++chunks === 3) children[0]!.kill('SIGKILL');
        }
      })()).rejects.toThrow();
      expect(chunks).toBeGreaterThanOrEqual(3);

      // The client retries on b, which takes the session over.
      const retried = await b!.chat.completions.create({ model: 'oa', messages: messages.map((m) => (m.role === 'user' && typeof m.content === 'string' ? { ...m, content: m.content.replace('[[slow 150]] ', '') } : m)) });
      expect(retried.choices[0]!.message.content).toBeTruthy();
      messages.push({ role: 'assistant', content: retried.choices[0]!.message.content });
      messages.push({ role: 'user', content: 'Fourth. [[say fourth answer]]' });
      await b!.chat.completions.create({ model: 'oa', messages });

      const sessions = await eventsOf(check);
      expect(sessions.size).toBe(1);
      const events = [...sessions.values()][0]!;
      const answers = events.filter((e) => e.type === 'llm.resp' && e.aborted !== true).map((e) => (e.type === 'llm.resp' ? e.reply.content : undefined));
      expect(answers[0]).toContain('first answer');
      expect(answers[1]).toContain('second answer');
      expect(answers.at(-1)).toContain('fourth answer');
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    } finally {
      for (const c of children) c.kill('SIGKILL');
      await check.close();
    }
    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(JSON.parse(replay.stdout)).toMatchObject({ failed: 0 });
  }, 120_000);
});
