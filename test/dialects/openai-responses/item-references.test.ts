/**
 * Responses `item_reference` items read from the log (item-references.ts, docs/inbound.md): each
 * named item in its place as the reply's own, the reasoning left to the log, one lookup per
 * session, and the API's 404 for whatever the log does not hold.
 */
import { describe, expect, it } from 'vitest';
import { isProxyError } from '../../../src/core/errors.js';
import type { AssistantMessage } from '../../../src/core/types.js';
import { resolveItemReferences } from '../../../src/dialects/openai-responses/item-references.js';
import { itemRefOf } from '../../../src/dialects/openai-responses/response-ids.js';

const SESSION = '20261207T103104Z-85dd1de7';
const replies = new Map<number, AssistantMessage>([
  [4, { role: 'assistant', content: 'reading both', tool_calls: [{ id: 'call_a', name: 'read', arguments: '{"path":"a"}' }, { id: 'call_b', name: 'read', arguments: '{"path":"b"}' }] }],
  [9, { role: 'assistant', content: null, tool_calls: [{ id: 'call_c', name: 'grep', arguments: '{}' }] }],
]);

function lookup(): { asked: { session: string; seqs: number[] }[]; replies: (session: string, seqs: ReadonlySet<number>) => Promise<Map<number, AssistantMessage>> } {
  const asked: { session: string; seqs: number[] }[] = [];
  return {
    asked,
    replies: async (session, seqs) => {
      asked.push({ session, seqs: [...seqs].sort((a, b) => a - b) });
      return new Map(session === SESSION ? [...replies].filter(([seq]) => seqs.has(seq)) : []);
    },
  };
}

const ref = (id: string) => ({ type: 'item_reference', id });
const user = { role: 'user', content: 'go' };

async function refusal(body: unknown): Promise<{ status: number; message: string; param: string | null | undefined }> {
  try {
    await resolveItemReferences(body, lookup().replies);
  } catch (err) {
    if (!isProxyError(err)) throw err;
    return { status: err.status, message: err.message, param: err.param };
  }
  throw new Error('not refused');
}

describe('resolveItemReferences', () => {
  it('leaves a body that names nothing as it is, the same object, and asks the log nothing', async () => {
    const l = lookup();
    for (const body of [{ input: [user] }, { input: 'text' }, {}, null]) expect(await resolveItemReferences(body, l.replies)).toBe(body);
    expect(l.asked).toStrictEqual([]);
  });

  it('puts each named item in its place as the logged reply has it; reasoning is left to the log', async () => {
    const l = lookup();
    const body = {
      model: 'm',
      input: [
        user,
        ref(`rs_${SESSION}_4_0`),
        ref(`msg_${SESSION}_4_1`),
        ref(`fc_${SESSION}_4_2`),
        ref(`fc_${SESSION}_4_3`),
        { type: 'function_call_output', call_id: 'call_a', output: 'A' },
        { type: 'function_call_output', call_id: 'call_b', output: 'B' },
        ref(`fc_${SESSION}_9_0`),
      ],
    };
    const out = await resolveItemReferences(body, l.replies) as { model: string; input: Record<string, unknown>[] };
    expect(out.model).toBe('m');
    expect(out.input.map((i) => i.type ?? 'user')).toStrictEqual(['user', 'message', 'function_call', 'function_call', 'function_call_output', 'function_call_output', 'function_call']);
    expect(out.input[1]).toMatchObject({ role: 'assistant', content: [{ type: 'output_text', text: 'reading both' }] });
    expect(out.input.filter((i) => i.type === 'function_call').map((i) => [i.call_id, i.name, i.arguments])).toStrictEqual([
      ['call_a', 'read', '{"path":"a"}'], ['call_b', 'read', '{"path":"b"}'], ['call_c', 'grep', '{}'],
    ]);
    // One lookup for the session, with every reply of it the body names; the body itself untouched.
    expect(l.asked).toStrictEqual([{ session: SESSION, seqs: [4, 9] }]);
    expect(body.input).toHaveLength(8);
  });

  it('a text streamed as two items is named twice and given once', async () => {
    const out = await resolveItemReferences({ input: [user, ref(`msg_${SESSION}_4_1`), ref(`msg_${SESSION}_4_3`)] }, lookup().replies) as { input: unknown[] };
    expect(out.input).toHaveLength(2);
  });

  it('refuses, as the API does (404, the item named), what the log does not hold', async () => {
    const cases: [string, unknown][] = [
      ['an id the proxy did not issue', 'rs_abc'],
      ['no id at all', undefined],
      ['a session the log does not have', `msg_20200101T000000Z-00000000_4_1`],
      ['a request of the session with no reply', `msg_${SESSION}_5_1`],
      ['text of a reply that had none', `msg_${SESSION}_9_0`],
      ['a call past the reply\'s calls', `fc_${SESSION}_9_1`],
    ];
    for (const [what, id] of cases) {
      const input = id === `fc_${SESSION}_9_1` ? [user, ref(`fc_${SESSION}_9_0`), ref(id)] : [user, ref(id as string)];
      const at = input.length - 1;
      expect(await refusal({ input }), what).toStrictEqual({ status: 404, message: `Item with id '${String(id)}' not found.`, param: `input[${at}]` });
    }
  });

  it('reads the ids it issues, and only those', () => {
    expect(itemRefOf(`fc_${SESSION}_12_3`)).toStrictEqual({ ref: { session: SESSION, seq: 12 }, kind: 'fc', index: 3 });
    expect(itemRefOf('msg_a_b_1_0')).toStrictEqual({ ref: { session: 'a_b', seq: 1 }, kind: 'msg', index: 0 });
    for (const id of ['resp_x_1', 'msg_x_1', 'ctc_x_1_0', 'msg__1_0', `msg_${SESSION}_1_x`]) expect(itemRefOf(id), id).toBeUndefined();
  });
});
