/**
 * Memory with many live sessions: the proxy in a process of its own (bench/live-memory-child.ts)
 * receives conversations of ~100 KB each (two requests: a user message with pasted output that
 * asks for two files, then the two files) until every one is live, or until `[sessions]
 * max_live_mb` sends the oldest out. Measured after a full GC, against the same process before
 * any session. The simulator and the clients run in this process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { createSim } from '../src/sim/server.js';
import { AGENT_TOOLS, fileContent } from './agent.js';
import type { ChildMessage, Memory } from './live-memory-child.js';

export interface LiveLimits {
  maxLive: number;
  maxLiveMb: number;
}

export interface LiveMemoryRow extends LiveLimits {
  conversations: number;
  live: number;
  /** Conversation bytes (each message once, as sent, and each reply) of the sessions still live. */
  heldBytes: number;
  baseline: Memory;
  after: Memory;
  seconds: number;
}

const SYSTEM = 'You are a careful coding agent working in a TypeScript repository. Read before you write; '
  + 'prefer small, reviewed changes; run the tests after every edit and report what they say.';
const CONCURRENCY = 4;

export async function measureLiveMemory(conversations: number, bytesEach: number, limits: readonly LiveLimits[]): Promise<LiveMemoryRow[]> {
  const rows: LiveMemoryRow[] = [];
  for (const limit of limits) rows.push(await once(conversations, bytesEach, limit));
  return rows;
}

async function once(conversations: number, bytesEach: number, limit: LiveLimits): Promise<LiveMemoryRow> {
  // Small replica caches: the simulator's memory is not measured, but it shares the machine.
  const sim = await createSim({ seed: 31, maxBlocksPerReplica: 4096 });
  const dir = await mkdtemp(join(tmpdir(), 'prefix-proxy-bench-live-'));
  const config = join(dir, 'config.toml');
  await writeFile(config, `listen = "127.0.0.1:0"\ndata_dir = "${join(dir, 'data')}"\n\n[sessions]\nmax_live = ${limit.maxLive}\nmax_live_mb = ${limit.maxLiveMb}\n\n[providers.s]\npreset = "sim"\nbase_url = "${sim.url}"\n`);
  const child = fork(join(import.meta.dirname, 'live-memory-child.js'), [config], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const ready = await next(child, 'ready');
    const url = `${ready.url}/v1/chat/completions`;
    const held: number[] = new Array<number>(conversations);
    const order: number[] = [];
    const started = performance.now();
    let n = 0;
    const worker = async () => {
      while (n < conversations) {
        const i = n++;
        held[i] = await converse(url, i + 1, bytesEach);
        order.push(i);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;
    child.send({ kind: 'measure' });
    const measured = await next(child, 'memory');
    // The live set drops the least recently used first: the sessions still live are the last to finish.
    const heldBytes = order.slice(order.length - measured.live).reduce((sum, i) => sum + held[i]!, 0);
    return { ...limit, conversations, live: measured.live, heldBytes, baseline: ready.memory, after: measured.memory, seconds };
  } finally {
    if (child.exitCode === null && child.connected) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ kind: 'close' });
      await exited;
    }
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One conversation of about `bytes`; returns its bytes (each message once, as sent, and each reply). */
async function converse(url: string, seed: number, bytes: number): Promise<number> {
  const messages: unknown[] = [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Task ${seed}: the build fails and I cannot see why. The output:\n${fileContent(seed, 0, 0, Math.round(bytes * 0.45))}`
        + `[[call read_file {"path":"src/config${seed}.ts"}]][[call read_file {"path":"src/server${seed}.ts"}]]`,
    },
  ];
  const first = await complete(url, messages);
  const calls = (first as { tool_calls?: { id: string }[] }).tool_calls ?? [];
  if (calls.length !== 2) throw new Error(`bench: conversation ${seed}: expected two tool calls, got ${JSON.stringify(first)}`);
  messages.push(first);
  calls.forEach((call, j) => {
    const say = j === 1 ? '[[say Found it: the port is read before the config is loaded.]]' : '';
    messages.push({ role: 'tool', tool_call_id: call.id, content: fileContent(seed, 1, j, Math.round(bytes * 0.25)) + say });
  });
  const second = await complete(url, messages);
  messages.push(second);
  return messages.reduce<number>((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
}

async function complete(url: string, messages: unknown[]): Promise<object> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model: 's/agent', messages, tools: AGENT_TOOLS }),
  });
  const body = (await res.body.json()) as { choices?: { message: { role: string; content: string | null; tool_calls?: unknown[] } }[] };
  const message = body.choices?.[0]?.message;
  if (res.statusCode !== 200 || message === undefined) throw new Error(`bench: ${res.statusCode} ${JSON.stringify(body)}`);
  return { role: 'assistant', content: message.content, ...(message.tool_calls === undefined ? {} : { tool_calls: message.tool_calls }) };
}

function next<K extends ChildMessage['kind']>(child: ChildProcess, kind: K): Promise<Extract<ChildMessage, { kind: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: ChildMessage) => {
      if (m.kind !== kind) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as Extract<ChildMessage, { kind: K }>);
    };
    const onExit = (code: number | null) => reject(new Error(`bench: the proxy process exited (${code}) before '${kind}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
