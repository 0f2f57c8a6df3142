/**
 * Drains and outages on PostgreSQL (docs/scaling.md, Drains; Outages). A rolling restart of two
 * `proxy serve` replicas (SIGTERM, wait for the exit, start again) under four streaming agents
 * behind a retrying balancer cuts no stream and fails no request. With the database stopped, a
 * request hears `store_unavailable` (503) in its own wire within the connect timeout and
 * /readyz says 503; started again, the same conversation goes on by itself, one session, replayed.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startProxy } from '../../src/proxy/server.js';
import { PgStore } from '../../src/store/pg/store.js';
import { usePgWorld } from './pg-world.js';
import { startBalancer } from './balancer.js';
import { runCli } from './harness.js';
import { freePort, replicaConfig, startReplica, type Replica } from './replica-procs.js';
import { streamingAgent } from './streaming-agent.js';

const pgw = usePgWorld('pp-drains-');

describe('drains', () => {
  it('a rolling restart of two replicas under four streaming agents cuts no stream', async () => {
    const env = 'PP_TEST_DRAIN_DB';
    process.env[env] = await pgw.server.createDatabase('drain');
    const replicas: Replica[] = [];
    const configs: string[] = [];
    for (const name of ['da', 'db']) {
      const port = await freePort();
      configs.push(await replicaConfig(pgw.dir, name, port, env, pgw.sim.urlFor('openai')));
      replicas.push({ name, origin: `http://127.0.0.1:${port}`, child: undefined, stderr: '', exited: Promise.resolve(0) });
    }
    const up = new Set<Replica>();
    const balancer = await startBalancer(() => replicas.filter((r) => up.has(r)).map((r) => r.origin));
    try {
      for (const [i, r] of replicas.entries()) {
        await startReplica(r, configs[i]!);
        up.add(r);
      }
      const client = new OpenAI({ baseURL: `${balancer.url}/v1`, apiKey: 'test', maxRetries: 0 });
      let done = false;
      const agents = Array.from({ length: 4 }, (_, i) => streamingAgent(client, { id: `d${i}`, model: 'oa', stop: () => done, slowMs: 25, len: 24 }));
      await new Promise((r) => setTimeout(r, 1500));
      const exits: (number | string)[] = [];
      const drained: number[] = [];
      for (const [i, r] of replicas.entries()) {
        // The balancer stops choosing it as a readiness probe would, but a request already sent may still land.
        r.child!.kill('SIGTERM');
        up.delete(r);
        exits.push(await r.exited);
        expect(r.stderr).not.toContain('were cut');
        drained.push(Number(/drained (\d+) request/.exec(r.stderr)?.[1]));
        await startReplica(r, configs[i]!);
        up.add(r);
        await new Promise((res) => setTimeout(res, 1500));
      }
      done = true;
      const results = await Promise.all(agents);
      expect(exits).toEqual([0, 0]);
      // Streams were in flight when each drain began (four agents, one stream each at any moment).
      expect(drained.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      for (const res of results) {
        expect(res.errors).toEqual([]);
        expect(res.cut).toBe(0);
        expect(res.answers.length).toBeGreaterThan(3);
      }
      // Every answer the agents received is in the log, in four sessions, none forked.
      const check = await PgStore.connect(process.env[env]!);
      try {
        const ids = await check.listSessions();
        expect(ids).toHaveLength(4);
        const logged = new Set<string>();
        for (const id of ids) {
          const { events } = await check.read(id);
          for (const e of events) if (e.type === 'llm.resp' && e.aborted !== true) logged.add(e.reply.content ?? '');
          expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
        }
        for (const res of results) for (const a of res.answers) expect(logged.has(a)).toBe(true);
      } finally {
        await check.close();
      }
    } finally {
      for (const r of replicas) r.child?.kill('SIGKILL');
      await balancer.close();
    }
    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(JSON.parse(replay.stdout)).toMatchObject({ failed: 0 });
  }, 120_000);
});

describe('outages', () => {
  it('with PostgreSQL stopped a request hears store_unavailable in its wire within the bound; started again, service resumes', async () => {
    const env = 'PP_TEST_OUTAGE_DB';
    process.env[env] = await pgw.server.createDatabase('outage');
    const path = await replicaConfig(pgw.dir, 'out', 0, env, pgw.sim.urlFor('openai'));
    const proxy = await startProxy(loadConfig({ path, env: process.env, cwd: pgw.dir }));
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'test', maxRetries: 0 });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are the outage agent.' },
      { role: 'user', content: 'First. [[say first answer]]' },
    ];
    try {
      const first = await client.chat.completions.create({ model: 'oa', messages });
      messages.push({ role: 'assistant', content: first.choices[0]!.message.content }, { role: 'user', content: 'Second. [[say second answer]]' });

      pgw.server.pause();
      const bound = 2000 + 1500; // connect_timeout_seconds, and some slack for a loaded machine
      const asks = [
        { path: '/v1/chat/completions', body: { model: 'oa', messages } },
        { path: '/v1/chat/completions', body: { model: 'oa', messages, stream: true } },
        { path: '/v1/chat/completions', body: { model: 'oa', messages: [{ role: 'user', content: 'A new conversation.' }] } },
        { path: '/v1/messages', body: { model: 'oa', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Another, in the Anthropic wire.' }] } },
      ];
      for (const ask of asks) {
        const t0 = Date.now();
        const res = await fetch(`${proxy.url}${ask.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask.body) });
        const ms = Date.now() - t0;
        expect(ms, ask.path).toBeLessThan(bound);
        expect(res.status).toBe(503);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(res.headers.get('retry-after')).toBe('1');
        const body = await res.json() as Record<string, unknown>;
        if (ask.path === '/v1/messages') expect(body).toMatchObject({ type: 'error', error: { type: 'api_error' } });
        else expect(body).toMatchObject({ error: { code: 'store_unavailable', type: 'api_error' } });
      }
      const ready = await fetch(`${proxy.url}/readyz`);
      expect(ready.status).toBe(503);

      pgw.server.resume();
      // Back by itself: no restart of the proxy, the conversation goes on where it was.
      let second: OpenAI.Chat.Completions.ChatCompletion | undefined;
      for (let i = 0; i < 50 && second === undefined; i++) {
        second = await client.chat.completions.create({ model: 'oa', messages }).catch(async () => {
          await new Promise((r) => setTimeout(r, 100));
          return undefined;
        });
      }
      expect(second?.choices[0]!.message.content).toContain('second answer');
      expect((await fetch(`${proxy.url}/readyz`)).status).toBe(200);
      messages.push({ role: 'assistant', content: second!.choices[0]!.message.content }, { role: 'user', content: 'Third. [[say third answer]]' });
      const third = await client.chat.completions.create({ model: 'oa', messages, stream: true });
      let text = '';
      for await (const c of third) text += c.choices[0]?.delta?.content ?? '';
      expect(text).toContain('third answer');
    } finally {
      await proxy.close();
    }
    const check = await PgStore.connect(process.env[env]!);
    try {
      // The failed requests wrote nothing: one session, its three answers.
      const ids = await check.listSessions();
      expect(ids).toHaveLength(1);
      const { events } = await check.read(ids[0]!);
      expect(events.filter((e) => e.type === 'llm.resp').map((e) => (e.type === 'llm.resp' ? e.reply.content : ''))).toEqual([
        expect.stringContaining('first answer'), expect.stringContaining('second answer'), expect.stringContaining('third answer'),
      ]);
      expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
    } finally {
      await check.close();
    }
    const replay = await runCli(['replay', '--all', '--json', '--store', 'postgres', '--url-env', env]);
    expect(JSON.parse(replay.stdout)).toMatchObject({ failed: 0 });
  }, 120_000);
});
