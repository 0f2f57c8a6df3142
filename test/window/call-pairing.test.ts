/** A tool result's call, decided on append as the walk pairs them, also across a rewrite (call-pairing.ts). */
import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { CallPairing } from '../../src/window/call-pairing.js';
import { Entry } from '../../src/window/entry.js';

const batch = (seq: number, ...ids: string[]) => new Entry(seq, { role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, name: 'Read', arguments: `{"file_path":"${id}.ts"}` })) });
const result = (seq: number, id: string) => new Entry(seq, { role: 'tool', tool_call_id: id, content: 'x' });
const user = (seq: number) => new Entry(seq, { role: 'user', content: 'u' } satisfies NeutralMessage);

describe('CallPairing', () => {
  it('pairs a result with the batch right before it, the first result per id; an orphan has no call', () => {
    const p = new CallPairing();
    const entries = [batch(1, 'a', 'b'), result(2, 'a'), result(3, 'a'), result(4, 'b'), user(5), result(6, 'b')];
    for (const e of entries) p.append(e);
    expect(entries.map((e) => e.call?.target)).toEqual([undefined, 'a.ts', undefined, 'b.ts', undefined, undefined]);
  });

  it('after a rewrite, a result answers the batch the rewrite left last, unless its id was answered already', () => {
    const p = new CallPairing();
    const entries = [user(1), batch(2, 'a', 'b'), result(3, 'a'), result(4, 'b'), user(5)];
    for (const e of entries) p.append(e);
    const kept = entries.slice(0, 3);
    p.truncated(kept);
    const again = result(6, 'a');
    const b = result(7, 'b');
    p.append(again);
    p.append(b);
    expect(again.paired).toBe(false);
    expect(b.call?.target).toBe('b.ts');
    p.truncated([user(1)]);
    const orphan = result(8, 'a');
    p.append(orphan);
    expect(orphan.paired).toBe(false);
  });
});
