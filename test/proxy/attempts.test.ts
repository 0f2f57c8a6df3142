import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/config/routes.js';
import { ProxyError } from '../../src/core/errors.js';
import { readCapped, UpstreamAttempts, type Answer, type AttemptIo } from '../../src/proxy/attempts.js';
import type { UpstreamResponse } from '../../src/proxy/upstream.js';

const timeouts = { connect_ms: 100, headers_ms: 100, body_ms: 100, deadline_ms: 1000 };
const primary: Deployment = { provider: 'a', baseUrl: 'http://a', headers: {}, timeouts };
const backup: Deployment = { provider: 'b', baseUrl: 'http://b', headers: {}, timeouts };

type Scripted = number | Error | { status: number; headers?: Record<string, string>; chunks: (string | Error)[] };

async function* bodyOf(chunks: (string | Error)[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) {
    if (c instanceof Error) throw c;
    yield Buffer.from(c);
  }
}

/** An io whose calls answer from `script` in order, recording what happened. */
function world(script: Scripted[], random = () => 0.5) {
  const seen: { sent: string[]; retries: string[]; slept: number[] } = { sent: [], retries: [], slept: [] };
  const io: AttemptIo = {
    async send(d) {
      seen.sent.push(d.provider);
      const next = script.shift();
      if (next === undefined) throw new Error('script ran out');
      if (next instanceof Error) throw next;
      const r = typeof next === 'number' ? { status: next, chunks: [`{"error":{"message":"${next}"}}`] } : next;
      return { status: r.status, headers: r.headers ?? {}, body: bodyOf(r.chunks) as unknown as UpstreamResponse['body'] };
    },
    onRetry: (reason, d) => seen.retries.push(`${d.provider}:${reason}`),
    random,
    now: () => 0,
    sleep: async (ms) => {
      seen.slept.push(ms);
    },
  };
  return { io, seen };
}

const plan = (deployments: Deployment[], retries: number) => ({ deployments, retries, backoff: { baseMs: 100, maxDelayMs: 1000 }, maxErrorBytes: 64 });
const refused = () => new ProxyError('upstream_unreachable', { provider: 'a', detail: 'refused' }, { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
const reset = () => new ProxyError('upstream_unreachable', { provider: 'a', detail: 'closed' }, { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });

async function text(answer: Answer): Promise<string> {
  if (answer.kind === 'status') return answer.text;
  let out = '';
  for await (const c of answer.body) out += Buffer.from(c).toString();
  return out;
}

describe('UpstreamAttempts', () => {
  it('retries 503 and a refused connection with jittered waits, then streams the answer from its first byte', async () => {
    const { io, seen } = world([503, refused(), { status: 200, chunks: ['data: 1\n\n', 'data: 2\n\n'] }]);
    const at = new UpstreamAttempts(plan([primary, backup], 2), io);
    const answer = await at.call(new AbortController().signal);
    expect(answer.kind).toBe('stream');
    expect(await text(answer)).toBe('data: 1\n\ndata: 2\n\n');
    expect(seen).toEqual({ sent: ['a', 'a', 'a'], retries: ['a:503', 'a:connect'], slept: [50, 100] });
    expect([at.attempts, at.deployment.provider]).toEqual([3, 'a']);
  });

  it('never retries a 4xx other than 408 and 429, and reads its body up to the cap', async () => {
    for (const status of [400, 401, 403, 404, 413, 422]) {
      const { io, seen } = world([{ status, chunks: ['x'.repeat(50), 'y'.repeat(50), 'z'.repeat(50)] }]);
      const at = new UpstreamAttempts(plan([primary, backup], 2), io);
      const answer = await at.call(new AbortController().signal);
      expect(answer).toMatchObject({ kind: 'status', status, text: 'x'.repeat(50) + 'y'.repeat(14) });
      expect(seen.sent).toEqual(['a']);
    }
  });

  it('goes to the fallback once the retries are spent, without waiting, and relays the last status', async () => {
    const { io, seen } = world([529, 529, 502, { status: 429, headers: { 'retry-after': '30' }, chunks: ['{}'] }, 503, 500]);
    const at = new UpstreamAttempts(plan([primary, backup], 2), io);
    const answer = await at.call(new AbortController().signal);
    expect(answer).toMatchObject({ kind: 'status', status: 500, text: '{"error":{"message":"500"}}' });
    expect(seen.sent).toEqual(['a', 'a', 'a', 'b', 'b', 'b']);
    expect(seen.retries).toEqual(['a:529', 'a:529', 'a:502', 'b:429', 'b:503']);
    // 50 and 100: jitter; none when moving to b; then b's retry-after, capped at 1000; then jitter again.
    expect(seen.slept).toEqual([50, 100, 1000, 100]);
    expect([at.attempts, at.deployment.provider]).toEqual([6, 'b']);
  });

  it('retries a stream that breaks or ends before its first byte, never one that broke after it', async () => {
    const broken = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const { io, seen } = world([
      { status: 200, chunks: [broken] },
      { status: 200, chunks: [] },
      { status: 200, chunks: ['data: first\n\n', broken] },
    ]);
    const at = new UpstreamAttempts(plan([primary], 3), io);
    const answer = await at.call(new AbortController().signal);
    expect(seen.retries).toEqual(['a:stream', 'a:stream']);
    await expect(text(answer)).rejects.toThrow(/other side closed/);
    expect(at.attempts).toBe(3);
  });

  it('throws the last transport failure once every deployment failed; reset and refused are told apart', async () => {
    const { io, seen } = world([reset(), refused()]);
    const at = new UpstreamAttempts(plan([primary, backup], 0), io);
    await expect(at.call(new AbortController().signal)).rejects.toMatchObject({ code: 'upstream_unreachable', message: expect.stringContaining('refused') });
    expect(seen.retries).toEqual(['a:reset']);
    expect(seen.slept).toEqual([]);
  });

  it('does not retry a headers or body timeout (the upstream may still be working on it)', async () => {
    for (const code of ['upstream_headers_timeout', 'upstream_body_timeout'] as const) {
      const { io, seen } = world([new ProxyError(code, { provider: 'a', ms: 1 }), 200]);
      await expect(new UpstreamAttempts(plan([primary, backup], 2), io).call(new AbortController().signal)).rejects.toMatchObject({ code });
      expect(seen.sent).toEqual(['a']);
    }
  });

  it('retries a connect timeout', async () => {
    const { io, seen } = world([new ProxyError('upstream_connect_timeout', { provider: 'a', ms: 1 }), { status: 200, chunks: ['ok'] }]);
    await new UpstreamAttempts(plan([primary], 1), io).call(new AbortController().signal);
    expect(seen.retries).toEqual(['a:connect_timeout']);
  });

  it('stops at once when its signal is aborted (the client left, the deadline passed)', async () => {
    const controller = new AbortController();
    const { io, seen } = world([500, 500, 500]);
    io.sleep = async () => {
      controller.abort();
      throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    };
    await expect(new UpstreamAttempts(plan([primary, backup], 2), io).call(controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen.sent).toEqual(['a']);
  });
});

describe('readCapped', () => {
  it('reads a body up to the cap, and what came of one that broke', async () => {
    expect(await readCapped(bodyOf(['ab', 'cd', 'ef']), 3)).toBe('abc');
    expect(await readCapped(bodyOf(['ab', new Error('cut')]), 10)).toBe('ab');
    expect(await readCapped(bodyOf([]), 10)).toBe('');
  });
});
