/**
 * The official `openai` client's `responses.compact` through the proxy (docs/inbound.md,
 * Compaction; decision 0033), to a Responses upstream and to Anthropic's: the answer lists every
 * user message and then one compaction item holding the model's summary, asked on the
 * conversation's cached prefix; the compacted list sent on as the next input is read as those
 * messages and the summary. A compaction item another server made is refused, naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { COMPACTION_PROMPT_MARKER } from '../../src/core/compaction-prompt.js';
import { COMPACTED_HEADER } from '../../src/dialects/openai-responses/compaction.js';
import { readSessions, replayAll, tag } from './harness.js';
import { startWiresWorld, wire, type WiresWorld } from './wires-world.js';

let w: WiresWorld;
beforeAll(async () => {
  w = await startWiresWorld({
    models: `
[models.gpt]
provider = "rs"
model = "gpt-sim"

[models.claude]
provider = "an"
model = "claude-sim"
`,
  });
});
afterAll(async () => {
  await w?.close();
});

const CONTENT_PREFIX = 'prefix-proxy.compaction.v1.';

describe.each([
  { model: 'gpt', path: '/v1/responses' },
  { model: 'claude', path: '/anthropic/v1/messages' },
])('responses.compact on a conversation routed to $model', ({ model, path }) => {
  it('lists the user messages, then one compaction item asked on the cached prefix; sent on, it is the summary', async () => {
    const t = tag(`compact-${model}`);
    const history: ResponseInputItem[] = [{ role: 'user', content: `${t} first question, with a long context: ${'context '.repeat(1500)}` }];
    for (const turn of ['second', 'third']) {
      const r = await w.client.responses.create({ model, input: history, store: false });
      history.push(...(r.output as ResponseInputItem[]), { role: 'user', content: `${t} ${turn} question` });
    }
    await w.client.responses.create({ model, input: history, store: false });
    const before = wire(w, path).length;
    const compacted = await w.client.responses.compact({ model, input: history });
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output.map((i) => i.type)).toStrictEqual(['message', 'message', 'message', 'compaction']);
    expect(compacted.output.slice(0, 3).map((i) => (i as { content: unknown }).content)).toStrictEqual(
      history.filter((i) => 'role' in i && i.role === 'user').map((i) => (i as { content: unknown }).content),
    );
    const item = compacted.output[3] as { encrypted_content: string };
    expect(item.encrypted_content.startsWith(CONTENT_PREFIX)).toBe(true);
    const summary = Buffer.from(item.encrypted_content.slice(CONTENT_PREFIX.length), 'base64url').toString('utf8');
    expect(summary.length).toBeGreaterThan(0);
    // One upstream request, on the conversation's prefix: most of its prompt read from the cache.
    const asked = wire(w, path).slice(before);
    expect(asked).toHaveLength(1);
    expect(compacted.usage.input_tokens_details.cached_tokens).toBeGreaterThan(compacted.usage.input_tokens * 0.8);

    const next = await w.client.responses.create({ model, input: [...(compacted.output as ResponseInputItem[]), { role: 'user', content: `${t} go on [[say Going on.]]` }] });
    expect(next.output_text).toBe('Going on.');
    expect(JSON.stringify(wire(w, path).at(-1)!.body)).toContain(JSON.stringify(`${COMPACTED_HEADER}\n\n${summary}`).slice(1, -1));
    // The ask is a side session of the conversation; the conversation's own log holds no compaction prompt.
    const logs = [...(await readSessions(w)).values()].filter((events) => JSON.stringify(events).includes(t));
    const sides = logs.filter((events) => events[0]?.type === 'session.start' && events[0].side?.kind === 'compaction');
    expect(sides).toHaveLength(1);
    expect(logs.filter((events) => events !== sides[0]).every((events) => !JSON.stringify(events).includes(COMPACTION_PROMPT_MARKER))).toBe(true);
  });
});

it('a compaction item another server made is a 400 naming it', async () => {
  const err = await w.client.responses.create({
    model: 'gpt', input: [{ role: 'user', content: 'hello' }, { type: 'compaction', encrypted_content: 'gAAAAAB-made-elsewhere' } as unknown as ResponseInputItem],
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[1].encrypted_content');
});

it('every logged request replays', async () => {
  const r = await replayAll(w);
  expect(r.code, r.stderr).toBe(0);
});
