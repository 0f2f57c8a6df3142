/**
 * Locating a session that left memory by the latest reply a request holds: an entry tells its reply
 * from another of the same text by the message it answered, or by its call ids.
 */
import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { messageKey, replyFingerprint } from '../../src/session/fingerprint.js';
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
