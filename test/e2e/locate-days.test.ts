/**
 * `[sessions] locate_days` through the HTTP API with the official client, on a clock the test moves:
 * a conversation that left memory is continued in its own log within the days, and past them its
 * continuation starts a session of its own while the old log stays and replays; `0` continues it
 * however long it was idle. Conversations without tools leave memory at their first answer, so each
 * continuation here finds a stored session, as one days later would. A Responses client's
 * `previous_response_id` is found for the same days.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { withSimulator } from '../../src/config/routes.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { createSim, type Sim } from '../../src/sim/server.js';
import { runCli } from './harness.js';

const DAY = 86_400_000;
type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

let open: { dir: string; sim: Sim; proxy: RunningProxy } | undefined;
afterEach(async () => {
  if (open === undefined) return;
  open.proxy.app.server.closeAllConnections();
  await open.proxy.close();
  await open.sim.close();
  await rm(open.dir, { recursive: true, force: true });
  open = undefined;
});

async function world(locateDays: number, now: () => Date) {
  const dir = await mkdtemp(join(tmpdir(), 'pp-locate-'));
  const sim = await createSim({ host: '127.0.0.1', port: 0 });
  const path = join(dir, 'config.toml');
  await writeFile(path, `listen = "127.0.0.1:0"\ndata_dir = ${JSON.stringify(join(dir, 'data'))}\n\n[sessions]\nlocate_days = ${locateDays}\n`);
  const proxy = await startProxy(withSimulator(loadConfig({ path, env: {}, cwd: dir }), sim.url), { now });
  open = { dir, sim, proxy };
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'test', maxRetries: 0 });
  const sessions = join(dir, 'data', 'sessions');
  /** Each log's user texts, by session. */
  const logs = async () => {
    const out = new Map<string, string[]>();
    for (const f of (await readdir(sessions)).filter((n) => n.endsWith('.jsonl'))) {
      const events = (await readFile(join(sessions, f), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { type: string; msg?: { role: string; content: string } });
      out.set(f, events.flatMap((e) => (e.type === 'client.msg' && e.msg?.role === 'user' ? [e.msg.content] : [])));
    }
    return out;
  };
  /** Send the conversation and append the reply, as a client does. */
  const send = async (messages: Msg[], next: string) => {
    messages.push({ role: 'user', content: next });
    const r = await client.chat.completions.create({ model: 'sim/locate', messages });
    messages.push({ role: 'assistant', content: r.choices[0]!.message.content });
  };
  return { dir, client, logs, send };
}

describe('[sessions] locate_days', () => {
  it('continues a stored conversation within the days; past them its continuation is a new session, and the old log stays and replays', async () => {
    let t = Date.parse('2026-11-01T09:00:00Z');
    const w = await world(1, () => new Date(t));
    const a: Msg[] = [{ role: 'system', content: 'You are terse.' }];
    const b: Msg[] = [{ role: 'system', content: 'You are brief.' }];
    await w.send(a, 'question a1');
    await w.send(b, 'question b1');
    expect((await w.logs()).size).toBe(2);

    t += DAY / 2;
    await w.send(a, 'question a2');
    t += DAY * 2;
    await w.send(b, 'question b2');

    const logs = [...(await w.logs()).values()].map((texts) => texts.join(' | ')).sort();
    // a's two questions in one log; b's continuation (all of b) in a log of its own, b's first log as it was.
    expect(logs).toEqual(['question a1 | question a2', 'question b1', 'question b1 | question b2']);
    const replay = await runCli(['replay', '--all', '--json', '--data-dir', join(w.dir, 'data')]);
    expect(replay.code, replay.stderr).toBe(0);
  });

  it('a Responses previous_response_id is continued within the days; past them it is not found, as OpenAI answers for a response it no longer keeps', async () => {
    let t = Date.parse('2026-11-01T09:00:00Z');
    const w = await world(1, () => new Date(t));
    const near = await w.client.responses.create({ model: 'sim/locate', input: 'near question' });
    const far = await w.client.responses.create({ model: 'sim/locate', input: 'far question' });
    t += DAY / 2;
    const next = await w.client.responses.create({ model: 'sim/locate', input: 'near, go on', previous_response_id: near.id });
    expect(next.id.slice(0, next.id.lastIndexOf('_'))).toBe(near.id.slice(0, near.id.lastIndexOf('_')));
    t += DAY * 2;
    const err = await w.client.responses.create({ model: 'sim/locate', input: 'far, go on', previous_response_id: far.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('previous_response_not_found');
    // Its log is still there, beside the conversation that went on.
    expect([...(await w.logs()).values()].map((texts) => texts.join(' | ')).sort()).toEqual(['far question', 'near question | near, go on']);
  });

  it('0 continues a conversation however long it was idle', async () => {
    let t = Date.parse('2026-11-01T09:00:00Z');
    const w = await world(0, () => new Date(t));
    const b: Msg[] = [{ role: 'system', content: 'You are brief.' }];
    await w.send(b, 'question b1');
    t += DAY * 400;
    await w.send(b, 'question b2');
    expect([...(await w.logs()).values()]).toEqual([['question b1', 'question b2']]);
  });
});
