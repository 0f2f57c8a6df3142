import { describe, expect, it } from 'vitest';
import { contents, LogBuilder } from './log-builder.js';

describe('system policy', () => {
  it('follow: a new head system prompt replaces the first message', () => {
    const log = new LogBuilder({ system: 'follow' }, { system: 'v1' });
    log.user('u1');
    log.system('v2');
    log.user('u2');
    const r = log.peek();
    expect(r.request.messages[0]).toEqual({ role: 'system', content: 'v2' });
    expect(contents(r)).toEqual(['v2', 'u1', 'u2']);
  });

  it('append: the first prompt stays, a different one joins the conversation where it came', () => {
    const log = new LogBuilder({ system: 'append' }, { system: 'v1' });
    log.user('u1');
    const before = log.send();
    log.system('v1'); // the same prompt again: nothing
    log.system('v2');
    log.system('v2');
    log.user('u2');
    log.system('v1'); // back to the first: differs from the latest, so it is appended
    const r = log.peek();
    expect(r.request.messages.map((m) => `${m.role}:${String(m.content)}`)).toEqual(['system:v1', 'user:u1', 'system:v2', 'user:u2', 'system:v1']);
    expect(r.request.messages.slice(0, 2)).toEqual(before.request.messages);
  });

  it('a system message the client sends without head is an ordinary entry', () => {
    const log = new LogBuilder({ system: 'follow' }, { system: 'v1' });
    log.user('u1');
    log.system('note', false);
    expect(contents(log.peek())).toEqual(['v1', 'u1', 'note']);
  });

  it('a session whose first head system prompt comes late gets it as its first message', () => {
    const log = new LogBuilder({ system: 'append' });
    log.user('u1');
    log.system('late');
    expect(contents(log.peek())).toEqual(['late', 'u1']);
  });
});

describe('client.rewrite', () => {
  it('removes every entry from from_seq on; later messages follow', () => {
    const log = new LogBuilder();
    log.user('u1');
    log.reply({ content: 'r1' });
    const u2 = log.user('u2');
    log.reply({ content: 'r2' });
    log.send();
    log.add({ type: 'client.rewrite', from_seq: u2 });
    log.user('u2 edited');
    expect(contents(log.peek())).toEqual(['u1', 'r1', 'u2 edited']);
  });

  it('a rewrite from before every entry empties the conversation, not the system prompt', () => {
    const log = new LogBuilder({}, { system: 'sys' });
    log.user('u1');
    log.reply({});
    log.add({ type: 'client.rewrite', from_seq: 1 });
    log.user('What did we do so far?');
    expect(contents(log.peek())).toEqual(['sys', 'What did we do so far?']);
  });
});

describe('summaries', () => {
  function conversation() {
    const log = new LogBuilder();
    const seqs = [log.user('u1'), log.reply({ content: 'r1' }), log.user('u2'), log.reply({ content: 'r2' }), log.user('u3'), log.reply({ content: 'r3' }), log.user('u4')];
    return { log, seqs };
  }

  it('replaces a span by one assistant message, and a revocation restores it byte for byte', () => {
    const { log, seqs } = conversation();
    const before = log.send();
    const s = log.add({ type: 'summary.add', from: seqs[0]!, to: seqs[3]!, text: 'SUMMARY', source_digest: 'd' }).seq;
    const summarised = log.peek();
    expect(summarised.request.messages.slice(0, 2)).toEqual([{ role: 'assistant', content: 'SUMMARY' }, { role: 'user', content: 'u3' }]);
    expect(contents(summarised)).toEqual(['SUMMARY', 'u3', 'r3', 'u4']);
    log.add({ type: 'summary.revoke', summary: s });
    expect(log.peek().digest).toBe(before.digest);
  });

  it('keeps the latest two user turns out: a span reaching into them is clipped, one inside them ignored', () => {
    const { log, seqs } = conversation();
    // u3 (seqs[4]) starts the latest two user turns.
    log.add({ type: 'summary.add', from: seqs[0]!, to: seqs[6]!, text: 'TOO FAR', source_digest: 'd' });
    expect(contents(log.peek())).toEqual(['TOO FAR', 'u3', 'r3', 'u4']);
    const { log: log2, seqs: seqs2 } = conversation();
    const before = log2.peek().digest;
    const ignored = log2.add({ type: 'summary.add', from: seqs2[4]!, to: seqs2[6]!, text: 'IGNORED', source_digest: 'd' }).seq;
    expect(log2.peek().digest).toBe(before);
    log2.add({ type: 'summary.revoke', summary: ignored });
    expect(log2.peek().digest).toBe(before);
  });

  it('keeps a clipped span as it was when later turns arrive', () => {
    const { log, seqs } = conversation();
    log.add({ type: 'summary.add', from: seqs[0]!, to: seqs[6]!, text: 'S', source_digest: 'd' });
    log.reply({ content: 'r4' });
    log.user('u5');
    log.reply({ content: 'r5' });
    log.user('u6');
    expect(contents(log.peek())).toEqual(['S', 'u3', 'r3', 'u4', 'r4', 'u5', 'r5', 'u6']);
  });

  it('a newer overlapping summary supersedes an older one until it is revoked', () => {
    const { log, seqs } = conversation();
    log.user('u5');
    log.add({ type: 'summary.add', from: seqs[0]!, to: seqs[1]!, text: 'OLD', source_digest: 'd' });
    const newer = log.add({ type: 'summary.add', from: seqs[1]!, to: seqs[3]!, text: 'NEW', source_digest: 'd' }).seq;
    expect(contents(log.peek())).toEqual(['u1', 'NEW', 'u3', 'r3', 'u4', 'u5']);
    log.add({ type: 'summary.revoke', summary: newer });
    expect(contents(log.peek())).toEqual(['OLD', 'u2', 'r2', 'u3', 'r3', 'u4', 'u5']);
  });
});
