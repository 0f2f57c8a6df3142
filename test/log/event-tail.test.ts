/** What a writer keeps of its log in memory, the same for the file and PostgreSQL stores. */
import { describe, expect, it } from 'vitest';
import { EventTail } from '../../src/log/event-tail.js';
import { TS, userMsg } from './helpers.js';

describe('EventTail', () => {
  it('numbers, redacts and places each event after what the log held', () => {
    const tail = new EventTail([], [], 4, 1000);
    const a = tail.add(userMsg('hello'), TS);
    const b = tail.add(userMsg(`key sk-ant-api03-${'x'.repeat(80)}`), TS);
    expect([a.event.seq, b.event.seq]).toEqual([5, 6]);
    expect(a.offset).toBe(1000);
    expect(b.offset).toBe(1000 + Buffer.byteLength(a.line));
    expect(tail.end).toBe(b.offset + Buffer.byteLength(b.line));
    expect(b.line).not.toContain('x'.repeat(40));
    expect(b.hits).toEqual(['anthropic']);
    expect(tail.offsetOf(5)).toBe(1000);
    expect(tail.offsetOf(4)).toBeUndefined();
    expect(tail.lastSeq).toBe(6);
  });

  it('lets events go on release and keeps the offsets; events read back extend it', () => {
    const tail = new EventTail([], [], 0, 0);
    tail.add(userMsg('one'), TS);
    tail.release();
    expect(tail.events).toBeUndefined();
    const other = new EventTail([], [], 0, 0).add(userMsg('two'), TS);
    const read = { ...other.event, seq: 2 };
    tail.addRead([read], [tail.end], tail.end + 50);
    expect(tail.lastSeq).toBe(2);
    expect(tail.end).toBe(tail.offsetOf(2)! + 50);
    expect(tail.add(userMsg('three'), TS).offset).toBe(tail.offsetOf(2)! + 50);
  });
});
