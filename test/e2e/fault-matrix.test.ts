/**
 * The fault matrix of docs/faults.md, made to happen: every row against the simulator (or a port
 * that refuses, a server that never answers), with a client of the OpenAI chat wire streamed and
 * not, and the mid-stream rows with Anthropic Messages and Responses clients too. What each run
 * sees is compared with the row's cells, so the document and the behaviour cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type Socket } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvents } from '../../src/cli/verify.js';
import { ERRORS, type ErrorCode } from '../../src/core/errors.js';
import type { EventOf } from '../../src/core/events.js';
import { newSessions, sessionIds, startWorld, tag, type World } from './harness.js';

type Wire = 'chat' | 'chat-stream' | 'anthropic-stream' | 'responses-stream';

interface Row {
  fault: string;
  retried: string;
  fallback: string;
  plain: string;
  streamed: string;
  log: string;
}

/** The matrix as docs/faults.md writes it. */
function readMatrix(): Row[] {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/faults.md'), 'utf8');
  const table = doc.slice(doc.indexOf('| Fault |'));
  const lines = table.split('\n').filter((l) => l.startsWith('|')).slice(2);
  return lines.map((line) => {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    expect(cells, line).toHaveLength(7);
    const [fault, , retried, fallback, plain, streamed, log] = cells as [string, string, string, string, string, string, string];
    return { fault, retried, fallback, plain, streamed, log };
  });
}

/** How each row is made: the route and the last message's directives. */
const SCENARIOS: Record<string, { model: string; say: string }> = {
  'connection refused': { model: 'fm-refused', say: '[[say fine]]' },
  'connect timeout': { model: 'fm-hole', say: '[[say fine]]' },
  'slow headers': { model: 'fm-slow', say: '[[say fine]]' },
  '400': { model: 'fm-sim', say: '[[error 400]]' },
  '408': { model: 'fm-sim', say: '[[error 408]]' },
  '429 with retry-after': { model: 'fm-sim', say: '[[error 429]] [[retry-after 1]]' },
  '500': { model: 'fm-sim', say: '[[error 500]]' },
  '502': { model: 'fm-sim', say: '[[error 502]]' },
  '503': { model: 'fm-sim', say: '[[error 503]]' },
  '529': { model: 'fm-sim', say: '[[error 529]]' },
  '500, then an answer': { model: 'fm-sim', say: '[[say fine]] [[error 500]] [[fail-times 1]]' },
  'refused, the fallback answers': { model: 'fm-rescue', say: '[[say fine]]' },
  'reset before first byte': { model: 'fm-sim', say: '[[reset]]' },
  'reset mid-stream': { model: 'fm-sim', say: `[[say ${'words that come before the break '.repeat(4)}]] [[reset-mid]]` },
  'malformed SSE': { model: 'fm-sim', say: '[[malformed-sse]]' },
  'stream ending without finish': { model: 'fm-sim', say: '[[say all of it but the end]] [[no-finish]]' },
  'oversized reply': { model: 'fm-sim', say: '[[oversized]]' },
  'oversized error body': { model: 'fm-sim', say: '[[error 500]] [[oversized]]' },
  'deadline before first byte': { model: 'fm-deadline', say: '[[slow 600]] [[say late]]' },
  'deadline mid-stream': { model: 'fm-deadline', say: `[[slow 60]] [[say ${'a reply that takes its time '.repeat(8)}]]` },
};

/** What one run saw. */
interface Seen {
  retried: string;
  fallback: string;
  client: string;
  log: string;
  /** The error's message, where the wire shows one. */
  message?: string;
}

let w: World;
let silent: Silent;
beforeAll(async () => {
  silent = await startSilent();
  const [deadA, deadB] = [await freePort(), await freePort()];
  const sim = (name: string, url: string, timeouts = '') => `[providers.${name}]\npreset = "generic"\nbase_url = "${url}"\n${timeouts}\n`;
  w = await startWorld({
    extraToml: (s) => `
[upstream]
retries = 2
retry_base_ms = 10
retry_max_delay_ms = 100
max_reply_bytes = 1048576

${sim('simA', s.urlFor('openai'))}${sim('simB', s.urlFor('openai'))}${sim('simD', s.urlFor('openai'), 'timeouts = { deadline_ms = 400 }')}
[providers.refusedA]
preset = "generic"
base_url = "http://127.0.0.1:${deadA}/v1"

[providers.refusedB]
preset = "generic"
base_url = "http://127.0.0.1:${deadB}/v1"

[providers.holeA]
preset = "generic"
base_url = "https://127.0.0.1:${silent.port}/v1"
timeouts = { connect_ms = 150 }

[providers.holeB]
preset = "generic"
base_url = "https://127.0.0.1:${silent.port}/v1"
timeouts = { connect_ms = 150 }

[providers.slowA]
preset = "generic"
base_url = "http://127.0.0.1:${silent.port}/v1"
timeouts = { headers_ms = 200 }

[providers.slowB]
preset = "generic"
base_url = "http://127.0.0.1:${silent.port}/v1"
timeouts = { headers_ms = 200 }

${route('fm-sim', 'simA', 'simB')}${route('fm-refused', 'refusedA', 'refusedB')}${route('fm-hole', 'holeA', 'holeB', 'retries = 1')}
${route('fm-slow', 'slowA', 'slowB')}${route('fm-deadline', 'simD', 'simB')}${route('fm-rescue', 'refusedA', 'simB')}
`,
  });
});
afterAll(async () => {
  await w?.close();
  await silent?.close();
});

function route(name: string, provider: string, fallback: string, extra = ''): string {
  return `[models.${name}]\nprovider = "${provider}"\nmodel = "sim-model"\nfallback = ["${fallback}"]\n${extra}\n\n`;
}

const rows = readMatrix();

describe('docs/faults.md', () => {
  it('has one row per scenario of this test, and each scenario is a row', () => {
    expect(rows.map((r) => r.fault).sort()).toEqual(Object.keys(SCENARIOS).sort());
  });

  it.each(rows.map((r) => [r.fault, r] as const))('%s: chat client, not streamed and streamed, as the row says', async (_fault, row) => {
    for (const wire of ['chat', 'chat-stream'] as const) {
      const seen = await run(row, wire);
      const want = { retried: row.retried, fallback: row.fallback, client: wire === 'chat' ? row.plain : row.streamed, log: wire === 'chat' ? row.log.replace(' + partial', '') : row.log };
      expect({ retried: seen.retried, fallback: seen.fallback, client: seen.client, log: seen.log }, `${row.fault}, ${wire}`).toEqual(want);
    }
  });

  const midStream = rows.filter((r) => r.streamed.startsWith('frame '));
  it.each(midStream.flatMap((r) => (['anthropic-stream', 'responses-stream'] as const).map((wire) => [r.fault, wire, r] as const)))(
    '%s: a %s client gets an error event in its wire, never a finish',
    async (_fault, wire, row) => {
      const seen = await run(row, wire);
      const code = row.streamed.slice('frame '.length) as ErrorCode;
      expect({ retried: seen.retried, fallback: seen.fallback, log: seen.log }).toEqual({ retried: row.retried, fallback: row.fallback, log: row.log });
      // Anthropic's error event has no code: its message is the code's own.
      expect(seen.client).toBe(wire === 'anthropic-stream' ? 'frame' : row.streamed);
      expect(seen.message).toContain(longestLiteral(ERRORS[code].message));
    },
  );
});

describe('the wait before a retry', () => {
  const timed = async (say: string) => {
    const started = performance.now();
    const got = await send('chat', 'fm-sim', 'You wait.', [{ role: 'user', content: `${tag('wait')} ${say} [[fail-times 1]] [[say done]]` }]);
    return { client: got.client, ms: performance.now() - started };
  };

  // The world's backoff waits under 10 ms before the first retry, and at most 100 ms (the cap).
  it('is what retry-after-ms asked, not the (shorter) backoff', async () => {
    const { client, ms } = await timed('[[error 429]] [[retry-after-ms 90]]');
    expect(client).toBe('200');
    expect(ms).toBeGreaterThanOrEqual(90);
  });

  it('is capped at retry_max_delay_ms whatever retry-after asks', async () => {
    const { client, ms } = await timed('[[error 503]] [[retry-after 5]]');
    expect(client).toBe('200');
    expect(ms).toBeGreaterThanOrEqual(100);
    expect(ms).toBeLessThan(2000);
  });
});

/** The longest run of a message template without placeholders: what every message of the code says. */
function longestLiteral(template: string): string {
  return template.split(/\{\w+\}/).map((s) => s.trim()).sort((a, b) => b.length - a.length)[0]!;
}

/**
 * One request of a fresh conversation; then, where the client saw part of a reply, the
 * conversation's next request (without it, as the client has it) goes on in the same session.
 */
async function run(row: Row, wire: Wire): Promise<Seen> {
  const scenario = SCENARIOS[row.fault]!;
  const t = tag(`fm-${row.fault}-${wire}`).replace(/\W+/g, '-');
  const before = await sessionIds(w);
  const system = `You help with ${t}.`;
  const first = `${t} ${scenario.say}`;
  const got = await send(wire, scenario.model, system, [{ role: 'user', content: first }]);

  const sessions = await newSessions(w, before);
  expect(sessions.size, row.fault).toBe(1);
  const [id, events] = [...sessions][0]!;
  const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
  expect(reqs, 'one llm.req whatever the attempts').toHaveLength(1);
  const outcome = events.find((e): e is EventOf<'llm.error'> | EventOf<'llm.resp'> => (e.type === 'llm.error' || e.type === 'llm.resp') && e.req === reqs[0]!.seq)!;
  expect(events.filter((e) => e.type === 'llm.error' || e.type === 'llm.resp'), 'one outcome per request').toHaveLength(1);
  const partial = outcome.type === 'llm.error' && outcome.partial !== undefined;
  if (partial) {
    // What the log says the client got is what it got.
    expect(got.text.length).toBeGreaterThan(0);
    expect(got.text.startsWith(outcome.partial!.content ?? '') || (outcome.partial!.content ?? '').startsWith(got.text)).toBe(true);
  }
  if (outcome.type === 'llm.resp') expect(got.text).toBe(outcome.reply.content);

  if (got.text !== '' && outcome.type === 'llm.error') await goesOn(wire, scenario.model, system, first, id);
  expect(verifyEvents((await newSessions(w, before)).get(id)!, { file: id }).filter((r) => !r.ok)).toEqual([]);

  return {
    retried: (outcome.attempts ?? 1) > 1 ? 'yes' : 'no',
    fallback: outcome.deployment !== undefined ? 'yes' : 'no',
    client: got.client,
    log: `${outcome.type}${partial ? ' + partial' : ''}`,
    ...(got.message === undefined ? {} : { message: got.message }),
  };
}

/** The next request, without the reply the client never had whole: same session, no rewrite, the prefix held. */
async function goesOn(wire: Wire, model: string, system: string, first: string, id: string): Promise<void> {
  const before = await sessionIds(w);
  const next = await send(wire, model, system, [{ role: 'user', content: first }, { role: 'user', content: 'and now [[say recovered]]' }]);
  expect(next.client, `the next request after a partial reply (${model})`).toBe('200');
  expect(next.text).toBe('recovered');
  expect(await newSessions(w, before)).toEqual(new Map());
  const events = (await newSessions(w, new Set())).get(id)!;
  expect(events.filter((e) => e.type === 'client.rewrite')).toEqual([]);
  const reqs = events.filter((e): e is EventOf<'llm.req'> => e.type === 'llm.req');
  expect(reqs.map((r) => r.cause)).toEqual(['first', 'none']);
}

interface Got {
  /** `200`, `STATUS code`, `frame code` (or `frame` for a wire without codes). */
  client: string;
  /** The reply text the client received (whole or not). */
  text: string;
  message?: string;
}

async function send(wire: Wire, model: string, system: string, messages: { role: 'user'; content: string }[]): Promise<Got> {
  const stream = wire !== 'chat';
  const [path, body] = wire === 'anthropic-stream'
    ? ['/v1/messages', { model, max_tokens: 1024, system, messages, stream }]
    : wire === 'responses-stream'
      ? ['/v1/responses', { model, instructions: system, input: messages, stream, store: false }]
      : ['/v1/chat/completions', { model, messages: [{ role: 'system', content: system }, ...messages], stream }];
  const res = await fetch(`${w.proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const raw = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const json = JSON.parse(raw) as { error?: { code?: string; message: string }; choices?: { message: { content: string } }[]; content?: { text: string }[] };
    if (res.status === 200) return { client: '200', text: json.choices?.[0]?.message.content ?? '' };
    return { client: `${res.status} ${json.error?.code}`, text: '', message: json.error!.message };
  }
  expect(res.status).toBe(200);
  return readStream(wire, sse(raw));
}

/** An SSE body's events: the `event:` name (if any) and the parsed data (`[DONE]` as a string). */
function sse(raw: string): { event: string | undefined; data: unknown }[] {
  return raw.split('\n\n').filter((f) => f.trim() !== '').map((frame) => {
    const lines = frame.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
    return { event, data: data === '[DONE]' ? data : JSON.parse(data) as unknown };
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** What a streamed client got: the text, and how the stream ended (a finish, or an error event and nothing after). */
function readStream(wire: Wire, events: { event: string | undefined; data: Any }[]): Got {
  if (wire === 'chat-stream') {
    const text = events.map((e) => e.data?.choices?.[0]?.delta?.content ?? '').join('');
    const last = events.at(-1)!.data;
    if (last?.error !== undefined) {
      expect(events.some((e) => e.data === '[DONE]' || e.data?.choices?.[0]?.finish_reason != null)).toBe(false);
      return { client: `frame ${last.error.code}`, text, message: last.error.message };
    }
    expect(last).toBe('[DONE]');
    return { client: '200', text };
  }
  if (wire === 'anthropic-stream') {
    const text = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text ?? '').join('');
    const last = events.at(-1)!;
    if (last.event === 'error') {
      expect(last.data).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      expect(events.some((e) => e.event === 'message_stop' || e.event === 'message_delta')).toBe(false);
      return { client: 'frame', text, message: last.data.error.message };
    }
    expect(last.event).toBe('message_stop');
    return { client: '200', text };
  }
  const text = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
  const error = events.find((e) => e.event === 'error');
  if (error !== undefined) {
    expect(events.at(-1)!.event).toBe('response.failed');
    expect(events.some((e) => e.event === 'response.completed')).toBe(false);
    return { client: `frame ${error.data.code}`, text, message: error.data.message };
  }
  expect(events.at(-1)!.event).toBe('response.completed');
  return { client: '200', text };
}

/** A TCP server that accepts and reads, and never answers: no TLS handshake, no response headers. */
interface Silent {
  port: number;
  close(): Promise<void>;
}

async function startSilent(): Promise<Silent> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

async function freePort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
