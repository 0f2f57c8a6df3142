/**
 * Traces through the simulator to a real OTLP/HTTP receiver: an agent conversation's requests
 * each give one SERVER span with its stages as children (session match, window build, the
 * upstream call with its first chunk, log sync), GenAI attributes and the proxy's own, the
 * client's traceparent continued and passed upstream, and no prompt text in any attribute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient, REAL_CLIENT } from '../e2e/agent-client.js';
import { drive } from '../e2e/agent-session.js';
import { startWorld, type World } from '../e2e/harness.js';
import { ask } from '../e2e/wires-client.js';
import { startReceiver, type Receiver, type ReceivedSpan, type Value } from './otlp-receiver.js';

const REQUESTS = 6;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TAG = 'trace-agent-marker';

let receiver: Receiver;
let world: World;
let agent: AgentClient;
const sent: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  // `capped` sets output_reserve: every request there is capped at 3000, the client's limit too.
  world = await startWorld({ tap: true, extraToml: `[models.capped]\nprovider = "ds"\nmodel = "deepseek-v4"\noutput_reserve = 3000\n[tracing]\nendpoint = "${receiver.endpoint}"\nservice_name = "pp-test"` });
  agent = new AgentClient(7, TAG, { ...REAL_CLIENT, credentialRate: 0.3, userCredentialRate: 0.3 });
  const driven = await drive(world, 'ds', agent, { requests: REQUESTS });
  expect(driven.failed).toBeUndefined();
  for (const a of driven.answers) if (a.content !== null) sent.push(a.content);
  await ask(world, 'ds', [{ role: 'user', content: `${TAG} a traced question` }], undefined, { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
  await ask(world, 'capped', [{ role: 'user', content: `${TAG} capped, no limit` }], undefined);
  await ask(world, 'capped', [{ role: 'user', content: `${TAG} capped, a larger limit` }], undefined, { body: { max_tokens: 90_000 } });
  // Closing the proxy shuts its tracer down, which exports what the batch holds.
  await world.close();
}, 60_000);

afterAll(async () => {
  await receiver.close();
});

const allRoots = () => receiver.spans.filter((s) => s.kind === 2);
/** The agent's and the traced request's: the two on `capped` are for the output-limit check. */
const roots = () => allRoots().filter((s) => s.attributes['prefix_proxy.route'] !== 'capped');
const childrenOf = (root: ReceivedSpan) => receiver.spans.filter((s) => s.parentSpanId === root.spanId);

describe('OpenTelemetry traces', () => {
  it('exports OTLP/HTTP JSON with the configured service name', () => {
    expect(receiver.contentTypes.length).toBeGreaterThan(0);
    for (const type of receiver.contentTypes) expect(type).toContain('application/json');
    expect(new Set(receiver.spans.map((s) => s.resource['service.name']))).toEqual(new Set(['pp-test']));
  });

  it('gives each client request one span whose children are its stages', () => {
    expect(roots()).toHaveLength(REQUESTS + 1);
    expect(allRoots()).toHaveLength(REQUESTS + 3);
    for (const root of roots()) {
      expect(root.name).toBe('chat deepseek-v4');
      const children = childrenOf(root);
      expect(children.map((c) => c.name).sort()).toEqual(['chat deepseek-v4', 'log.sync', 'session.match', 'window.build']);
      for (const c of children) expect(c.traceId).toBe(root.traceId);
      const upstream = children.find((c) => c.kind === 3)!;
      expect(upstream.events.map((e) => e.name)).toEqual(['first_chunk']);
      expect(upstream.events[0]!.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
      expect(upstream.attributes['gen_ai.usage.input_tokens']).toBe(root.attributes['gen_ai.usage.input_tokens']);
    }
    expect(new Set(roots().map((r) => r.traceId)).size).toBe(REQUESTS + 1);
  });

  it('sets the GenAI attributes and the proxy\'s own from the reply\'s usage', () => {
    const agentRoots = roots().filter((r) => r.traceId !== CLIENT_TRACE);
    const sessions = new Set(agentRoots.map((r) => r.attributes['prefix_proxy.session.id']));
    expect(sessions.size).toBe(1);
    expect([...sessions][0]).toMatch(/\S/);
    for (const r of agentRoots) {
      expect(r.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat', 'gen_ai.system': 'deepseek', 'gen_ai.provider.name': 'deepseek',
        'gen_ai.request.model': 'deepseek-v4', 'prefix_proxy.route': 'ds', 'gen_ai.response.finish_reasons': [expect.any(String)],
      });
      expect(r.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(r.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(typeof r.attributes['gen_ai.usage.cache_read.input_tokens']).toBe('number');
      expect(typeof r.attributes['prefix_proxy.break_cause']).toBe('string');
    }
    // The first request has no predecessor; later ones read its prefix from the simulator's cache.
    const causes = agentRoots.map((r) => r.attributes['prefix_proxy.break_cause']);
    expect(causes).toContain('first');
    expect(causes.filter((c) => c === 'none').length).toBeGreaterThan(0);
    const reuse = agentRoots.map((r) => r.attributes['prefix_proxy.prefix_reuse']).filter((v): v is number => typeof v === 'number');
    expect(reuse.length).toBeGreaterThan(0);
    expect(Math.max(...reuse)).toBeGreaterThan(0.5);
    expect(Math.max(...reuse)).toBeLessThanOrEqual(1);
  });

  it('names the output limit the upstream got, not the client\'s', () => {
    const capped = allRoots().filter((r) => r.attributes['prefix_proxy.route'] === 'capped');
    expect(capped.map((r) => r.attributes['gen_ai.request.max_tokens'])).toStrictEqual([3000, 3000]);
    const sentLimits = (world.tap?.requests ?? []).map((r) => (r.body as { max_tokens?: number }).max_tokens);
    expect(sentLimits.filter((m) => m === 3000)).toHaveLength(2);
    // The ds route adds no limit and its client gave none: no attribute, as nothing was sent.
    const ds = roots().filter((r) => r.attributes['prefix_proxy.route'] === 'ds');
    expect(ds.every((r) => r.attributes['gen_ai.request.max_tokens'] === undefined)).toBe(sentLimits.filter((m) => m !== 3000).every((m) => m === undefined));
  });

  it('continues the client\'s traceparent and passes the upstream span\'s to the upstream', () => {
    const traced = roots().find((r) => r.traceId === CLIENT_TRACE);
    expect(traced?.parentSpanId).toBe(CLIENT_SPAN);
    const upstream = childrenOf(traced!).find((c) => c.kind === 3)!;
    const forwarded = world.tap!.requests.map((r) => r.headers.traceparent);
    expect(forwarded).toContain(`00-${CLIENT_TRACE}-${upstream.spanId}-01`);
    // Every upstream request carried its own upstream span's context.
    const upstreamSpans = new Set(receiver.spans.filter((s) => s.kind === 3).map((s) => `00-${s.traceId}-${s.spanId}-01`));
    expect(forwarded.filter((t) => typeof t === 'string' && upstreamSpans.has(t))).toHaveLength(REQUESTS + 3);
  });

  it('puts no prompt, reply or credential in any attribute', () => {
    const strings: string[] = [];
    const collect = (v: Value) => (Array.isArray(v) ? v.forEach(collect) : typeof v === 'string' && strings.push(v));
    for (const s of receiver.spans) {
      Object.values(s.attributes).forEach(collect);
      for (const e of s.events) Object.values(e.attributes).forEach(collect);
      if (s.status?.message !== undefined) strings.push(s.status.message);
    }
    expect(strings.length).toBeGreaterThan(50);
    for (const text of strings) {
      expect(text).not.toContain(TAG);
      expect(text).not.toContain('careful coding agent');
      expect(text.length).toBeLessThan(200);
    }
    const planted = agent.credentials.planted.map((c) => c.core);
    expect(planted.length).toBeGreaterThan(0);
    for (const secret of [...planted, ...sent.filter((c) => c.length > 8)]) for (const text of strings) expect(text).not.toContain(secret);
    expect(Object.keys(receiver.spans[0]!.attributes).some((k) => k.startsWith('gen_ai.input'))).toBe(false);
  });
});
