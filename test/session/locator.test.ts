/**
 * Locating a session that left memory by the latest reply a request holds: an entry tells its reply
 * from another of the same text by the message it answered, or by its call ids. And for how long:
 * a session idle past the horizon is found by nothing, and its entry is not kept.
 */
import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { chainHashes, messageKey, replyFingerprint } from '../../src/session/fingerprint.js';
import { IncomingMessage } from '../../src/session/incoming.js';
import { Locator, type StoredEntry } from '../../src/session/locator.js';

const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const done: NeutralMessage = { role: 'assistant', content: 'Done.' };
const called = (id: string): NeutralMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, name: 'read', arguments: '{}' }] });

function stored(extra: Partial<StoredEntry>, reply: NeutralMessage = done): Locator {
  const locator = new Locator();
  locator.store({ id: 's1', tip: 'not-a-hash', length: 2, ids: [], lineage: 's1', lastActive: 0, latestReply: replyFingerprint(reply)!, ...extra }, undefined);
  return locator;
}

function find(locator: Locator, messages: NeutralMessage[]): string | undefined {
  return locator.find({ explicitId: undefined, h0: 'another head', incoming: messages.map((m) => new IncomingMessage(m)) }, () => undefined);
}

describe('Locator, a stored session by its latest reply', () => {
  it('an entry saved without marks (before they were kept) is taken on its reply alone', () => {
    expect(find(stored({}), [u('something else'), done, u('more')])).toBe('s1');
  });

  it('a reply of text alone: only where it answered the same message', () => {
    const locator = stored({ replyTo: messageKey(u('task')) });
    expect(find(locator, [u('something else'), done, u('more')])).toBeUndefined();
    expect(find(locator, [u('task'), done, u('more')])).toBe('s1');
  });

  it('a reply that opened the view answers nothing, and is taken on its text', () => {
    expect(find(stored({ replyTo: '' }), [u('anything'), done, u('more')])).toBe('s1');
  });

  it('a reply with tool calls: only with the same call ids', () => {
    const locator = stored({ replyTo: messageKey(u('task')), replyCalls: ['c1'] }, called('c1'));
    expect(find(locator, [u('task'), called('c2'), { role: 'tool', tool_call_id: 'c2', content: 'x' }])).toBeUndefined();
    expect(find(locator, [u('other'), called('c1'), { role: 'tool', tool_call_id: 'c1', content: 'x' }])).toBe('s1');
  });
});

describe('Locator, a stored session for a time (a horizon)', () => {
  const DAY = 86_400_000;
  const h0 = 'the head';
  const history = (n: number): NeutralMessage[] => [u(`task ${n}`), { role: 'assistant', content: `answer ${n}` }];
  const entry = (n: number, lastActive: number, ids: string[] = []): StoredEntry => {
    const msgs = history(n);
    return { id: `s${n}`, tip: chainHashes(h0, msgs.map((m) => messageKey(m))).at(-1)!, length: 2, ids, lineage: `s${n}`, lastActive, latestReply: replyFingerprint(msgs[1]!)!, replyTo: messageKey(msgs[0]!) };
  };
  const byTip = (locator: Locator, n: number) => locator.find({ explicitId: undefined, h0, incoming: [...history(n), u('next')].map((m) => new IncomingMessage(m)) }, () => undefined);
  const byName = (locator: Locator, name: string) => locator.find({ explicitId: name, h0, incoming: [u('next')].map((m) => new IncomingMessage(m)) }, () => undefined);
  const byReply = (locator: Locator, n: number) => locator.find({ explicitId: undefined, h0: 'another head', incoming: [u(`task ${n}`), history(n)[1]!, u('next')].map((m) => new IncomingMessage(m)) }, () => undefined);

  it('finds a session idle less than the horizon by its tip, its name and its reply; past it, by none, and keeps no entry', () => {
    let now = 100 * DAY;
    const locator = new Locator({ ms: 30 * DAY, now: () => now });
    locator.store(entry(1, now - 29 * DAY, ['named-1']), undefined);
    locator.store(entry(2, now - DAY, ['named-2']), undefined);
    expect([byTip(locator, 1), byName(locator, 'named-1'), byReply(locator, 1)]).toEqual(['s1', 's1', 's1']);
    // Two days on, the first is idle past the horizon: the next lookup takes it away, no store needed.
    now += 2 * DAY;
    expect([byTip(locator, 1), byName(locator, 'named-1'), byReply(locator, 1), locator.stored('s1')]).toEqual([undefined, undefined, undefined, undefined]);
    expect([byTip(locator, 2), byName(locator, 'named-2'), byReply(locator, 2)]).toEqual(['s2', 's2', 's2']);
    expect(locator.storedCount).toBe(1);
  });

  it('does not keep an entry already idle past the horizon (a start reading old sessions)', () => {
    const now = 100 * DAY;
    const locator = new Locator({ ms: 30 * DAY, now: () => now });
    locator.store(entry(1, now - 31 * DAY, ['old']), undefined);
    expect([locator.storedCount, byTip(locator, 1), byName(locator, 'old'), byReply(locator, 1)]).toEqual([0, undefined, undefined, undefined]);
  });

  it('a session stored again (read back, then left again) is kept from its new last request, however often it was', () => {
    let now = 100 * DAY;
    const locator = new Locator({ ms: 30 * DAY, now: () => now });
    locator.store(entry(1, now), undefined);
    locator.store(entry(2, now), undefined);
    for (let i = 1; i <= 5000; i++) locator.store(entry(1, now + i * 300_000), undefined);
    now += 31 * DAY;
    // s2 is idle past the horizon; s1's last request was ~17 days later, so it is not, whatever its earlier entries said.
    expect([byTip(locator, 1), byTip(locator, 2), locator.storedCount]).toEqual(['s1', undefined, 1]);
  });

  it('without a horizon keeps every entry, however old', () => {
    const locator = new Locator();
    locator.store(entry(1, 0), undefined);
    expect(byTip(locator, 1)).toBe('s1');
  });

  it('holds about a horizon of sessions, however many pass through', () => {
    let now = 0;
    const locator = new Locator({ ms: 1000, now: () => now });
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      now += 1;
      locator.store({ ...entry(i, now), latestReply: `r${i}` }, undefined);
      most = Math.max(most, locator.storedCount);
    }
    expect(most).toBeLessThanOrEqual(1001);
    expect(byTip(locator, 19_999 - 500)).toBe(`s${19_999 - 500}`);
    expect(byTip(locator, 19_999 - 1500)).toBeUndefined();
  });
});
