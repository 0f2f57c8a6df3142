/**
 * The conversation up to a logged reply (src/session/conversation.ts), for `previous_response_id`:
 * a missing or unreadable log is "no such reply" (the caller answers previous_response_not_found),
 * but a store that cannot be reached is `store_unavailable` (a 503 the client retries), never a
 * 400 saying the reply does not exist.
 */
import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../src/core/errors.js';
import type { LogEvent } from '../../src/core/events.js';
import { conversationFromLog } from '../../src/session/conversation.js';
import type { Store } from '../../src/store/types.js';

function storeReading(read: () => Promise<{ events: LogEvent[] }>): Store {
  return { read } as unknown as Store;
}

const ts = '2026-12-03T00:00:00.000Z';
const events = [
  { seq: 1, ts, type: 'client.msg', msg: { role: 'user', content: 'hi' } },
  { seq: 2, ts, type: 'llm.req' },
  { seq: 3, ts, type: 'llm.resp', req: 2, reply: { content: 'hello', finish_reason: 'stop' }, timings: { total_ms: 1 } },
] as unknown as LogEvent[];

describe('conversationFromLog', () => {
  it('gives the conversation through the named reply', async () => {
    const c = await conversationFromLog(storeReading(async () => ({ events })), 's', 2);
    expect(c?.messages.map((m) => m.role)).toStrictEqual(['user', 'assistant']);
    expect(await conversationFromLog(storeReading(async () => ({ events })), 's', 9)).toBeUndefined();
  });

  it('a reply the client stopped is the text it had received, its calls left out; none received, none given', async () => {
    const stopped = (reply: Record<string, unknown>) => [
      ...events.slice(0, 2),
      { seq: 3, ts, type: 'llm.resp', req: 2, reply, aborted: true, timings: { total_ms: 1 } },
    ] as unknown as LogEvent[];
    const partial = await conversationFromLog(storeReading(async () => ({ events: stopped({ content: 'hel', tool_calls: [{ id: 'c', name: 'f', arguments: '{"a' }], finish_reason: null }) })), 's', 2);
    expect(partial?.messages).toStrictEqual([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hel' }]);
    const nothing = await conversationFromLog(storeReading(async () => ({ events: stopped({ content: null, finish_reason: null }) })), 's', 2);
    expect(nothing?.messages).toStrictEqual([{ role: 'user', content: 'hi' }]);
    // A failure is no reply.
    const failed = [...events.slice(0, 2), { seq: 3, ts, type: 'llm.error', req: 2, error: 'boom' }] as unknown as LogEvent[];
    expect(await conversationFromLog(storeReading(async () => ({ events: failed })), 's', 2)).toBeUndefined();
  });

  it('is undefined for a log that is missing or damaged', async () => {
    expect(await conversationFromLog(storeReading(async () => { throw new ProxyError('session_not_found', { session: 's', file: 'f' }); }), 's', 2)).toBeUndefined();
    expect(await conversationFromLog(storeReading(async () => { throw new ProxyError('log_malformed', { file: 'f', line: '2', detail: 'bad' }); }), 's', 2)).toBeUndefined();
  });

  it('throws store_unavailable when the store cannot be reached: the reply may exist', async () => {
    const down = storeReading(async () => { throw new ProxyError('store_unavailable', { detail: 'connect ECONNREFUSED' }); });
    await expect(conversationFromLog(down, 's', 2)).rejects.toMatchObject({ code: 'store_unavailable', status: 503 });
  });
});
