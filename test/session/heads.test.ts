import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/core/types.js';
import { Heads } from '../../src/session/heads.js';

const tools = (description: string): ToolSpec[] => [{ type: 'function', function: { name: 'read', description, parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

describe('Heads', () => {
  it('gives a head resent as new objects (each request parses its own) the head it had, whether recent or not', () => {
    const heads = new Heads();
    const first = heads.resolve('sys', tools('Reads a file.'));
    expect(heads.resolve('sys', tools('Reads a file.'))).toBe(first);
    // Past the few compared as they come: found by its text.
    for (let i = 0; i < 6; i++) heads.resolve(`other ${i}`, tools(`tool ${i}`));
    expect(heads.resolve('sys', tools('Reads a file.'))).toBe(first);
  });

  it('tells heads apart by system prompt, tools and the tools\' key order, and redacts what it keeps', () => {
    const heads = new Heads();
    const a = heads.resolve('sys', tools('Reads a file.'));
    expect(heads.resolve('sys 2', tools('Reads a file.'))).not.toBe(a);
    expect(heads.resolve(undefined, tools('Reads a file.'))).not.toBe(a);
    expect(heads.resolve('sys', tools('Reads a file!'))).not.toBe(a);
    const swapped: ToolSpec[] = [{ function: { name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } }, type: 'function' }];
    const b = heads.resolve('sys', swapped);
    expect(b).not.toBe(a);
    expect(b.catalog).toBe(a.catalog);
    const secret = heads.resolve('key: sk-ant-api03-' + 'x'.repeat(90), []);
    expect(secret.system).toContain('[redacted:');
  });

  it('compares a list met again as the same array by identity, not by a walk', () => {
    const heads = new Heads();
    const first = heads.resolve('sys', tools('Reads a file.'));
    // The body memo hands a repeated head over as the same frozen objects (src/proxy/head-memo.ts).
    const again = tools('Reads a file.');
    let reads = 0;
    const fn = again[0]!.function;
    Object.defineProperty(again[0], 'function', { enumerable: true, get: () => (reads++, fn) });
    expect(heads.resolve('sys', again)).toBe(first);
    const walked = reads;
    expect(walked).toBeGreaterThan(0);
    expect(heads.resolve('sys', again)).toBe(first);
    expect(heads.resolve('sys', again)).toBe(first);
    expect(reads).toBe(walked);
  });
});
