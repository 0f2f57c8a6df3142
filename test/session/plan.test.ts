import { describe, expect, it } from 'vitest';
import type { NeutralMessage } from '../../src/core/types.js';
import { messageKey, replyFingerprint } from '../../src/session/fingerprint.js';
import { planRequest, type PlanContext } from '../../src/session/plan.js';
import type { ViewEntry } from '../../src/session/view.js';

const u = (text: string): NeutralMessage => ({ role: 'user', content: text });
const a = (text: string): NeutralMessage => ({ role: 'assistant', content: text });

/** A view whose entries have seqs 10, 20, 30, ... */
function view(...msgs: NeutralMessage[]): ViewEntry[] {
  return msgs.map((msg, i) => ({ seq: (i + 1) * 10, msg, key: messageKey(msg) }));
}

function incoming(...msgs: NeutralMessage[]) {
  return msgs.map((m) => ({ key: messageKey(m), fp: replyFingerprint(m) }));
}

const follow: PlanContext = { explicit: false, clientDrops: 'follow' };

describe('planRequest', () => {
  it('append: the request extends the whole view; its new messages start where the view ends', () => {
    expect(planRequest(view(u('1'), a('r1')), incoming(u('1'), a('r1'), u('2')), follow)).toEqual({ kind: 'append', from: 2 });
    expect(planRequest([], incoming(u('1')), follow)).toEqual({ kind: 'append', from: 0 });
  });

  it('append with nothing new: the same request again (a retry)', () => {
    expect(planRequest(view(u('1'), a('r1'), u('2')), incoming(u('1'), a('r1'), u('2')), follow)).toEqual({ kind: 'append', from: 3 });
  });

  it('matches leniently: a reply echoed with null content, reordered argument keys and no reasoning', () => {
    const logged: NeutralMessage = { role: 'assistant', content: '', thinking: 'hm', tool_calls: [{ id: 'c1', name: 'f', arguments: '{"a":1,"b":2}' }] };
    const echoed: NeutralMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'f', arguments: '{"b": 2, "a": 1}' }] };
    const plan = planRequest(view(u('1'), logged), incoming(u('1'), echoed, { role: 'tool', tool_call_id: 'c1', content: 'x' }), follow);
    expect(plan).toEqual({ kind: 'append', from: 2 });
  });

  describe('rewrite', () => {
    it('an explicitly named session whose history diverged (a compaction)', () => {
      const v = view(u('1'), a('r1'), u('2'), a('r2'));
      expect(planRequest(v, incoming(u('summary'), a('r2'), u('3')), { ...follow, explicit: true })).toEqual({ kind: 'rewrite', fromSeq: 10, from: 0 });
      expect(planRequest(v, incoming(u('1'), a('r1'), u('2 edited')), { ...follow, explicit: true })).toEqual({ kind: 'rewrite', fromSeq: 30, from: 2 });
    });

    it('no id, but the request still carries the latest reply: the same conversation, edited', () => {
      const v = view(u('1'), a('r1'), u('2'), a('r2'));
      expect(planRequest(v, incoming(u('summary'), a('r2'), u('3')), follow)).toEqual({ kind: 'rewrite', fromSeq: 10, from: 0 });
    });

    it('an explicit id wins over a request in flight that did not diverge from what it added', () => {
      const v = view(u('1'), a('r1'), u('2'));
      // In flight from 2 (u('2') is its message); the request diverges before that, at 1.
      expect(planRequest(v, incoming(u('1'), a('other')), { explicit: true, clientDrops: 'follow', inFlightFrom: 2 })).toEqual({ kind: 'rewrite', fromSeq: 20, from: 1 });
    });
  });

  describe('fork', () => {
    it('a request diverging at or after what a running request added: a concurrent branch', () => {
      const v = view(u('1'), a('r1'), u('2a'));
      const plan = planRequest(v, incoming(u('1'), a('r1'), u('2b')), { ...follow, inFlightFrom: 2 });
      expect(plan).toEqual({ kind: 'fork', atSeq: 30, from: 2 });
      // Even with an explicit id: two requests at once under one id are two branches.
      expect(planRequest(v, incoming(u('1'), a('r1'), u('2b')), { explicit: true, clientDrops: 'follow', inFlightFrom: 2 })).toEqual(plan);
    });

    it('exactly the conversation of a request in flight: a twin, forked after the last entry, not queued', () => {
      const v = view(u('1'), a('r1'), u('2'));
      expect(planRequest(v, incoming(u('1'), a('r1'), u('2')), { ...follow, inFlightFrom: 2 })).toEqual({ kind: 'fork', atSeq: 31, from: 3 });
      // With nothing in flight it is a retry of the last turn: append, nothing new.
      expect(planRequest(v, incoming(u('1'), a('r1'), u('2')), follow)).toEqual({ kind: 'append', from: 3 });
      // Extending the running request's conversation: it waits for it (append).
      expect(planRequest(v, incoming(u('1'), a('r1'), u('2'), u('3')), { ...follow, inFlightFrom: 2 })).toEqual({ kind: 'append', from: 3 });
    });

    it('no id and not the latest reply: another conversation that shares a prefix', () => {
      const v = view(u('1'), a('r1'), u('2'), a('r2'));
      expect(planRequest(v, incoming(u('1'), a('r1'), u('other')), follow)).toEqual({ kind: 'fork', atSeq: 30, from: 2 });
      // A shorter request that is a prefix of the view: a second client sending the same opening.
      expect(planRequest(v, incoming(u('1')), follow)).toEqual({ kind: 'fork', atSeq: 20, from: 1 });
    });
  });

  describe('absorb (client_drops = absorb)', () => {
    const absorb: PlanContext = { explicit: false, clientDrops: 'absorb' };

    it('a client that dropped its oldest messages: only what follows the view is new', () => {
      const v = view(u('1'), a('r1'), u('2'), a('r2'));
      expect(planRequest(v, incoming(u('2'), a('r2'), u('3')), absorb)).toEqual({ kind: 'absorb', from: 2, dropped: 2 });
    });

    it('a client that kept its first message and dropped the middle', () => {
      const v = view(u('1'), a('r1'), u('2'), a('r2'), u('3'), a('r3'));
      expect(planRequest(v, incoming(u('1'), u('3'), a('r3'), u('4')), absorb)).toEqual({ kind: 'absorb', from: 3, dropped: 3 });
    });

    it('is not absorb when the rest does not follow unchanged, or under follow', () => {
      const v = view(u('1'), a('r1'), u('2'), a('r2'));
      expect(planRequest(v, incoming(u('2'), a('r2 edited'), u('3')), absorb).kind).not.toBe('absorb');
      expect(planRequest(v, incoming(u('2'), a('r2'), u('3')), follow)).toEqual({ kind: 'rewrite', fromSeq: 10, from: 0 });
    });
  });
});
