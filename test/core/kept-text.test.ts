import { describe, expect, it } from 'vitest';
import { keptText } from '../../src/core/kept-text.js';

describe('keptText', () => {
  it('makes a text once per value and kind, and again for another value or kind', () => {
    const value = { tools: ['read'] };
    let made = 0;
    const make = (text: string) => () => {
      made++;
      return text;
    };
    expect(keptText(value, 'a', make('first'))).toBe('first');
    expect(keptText(value, 'a', make('second'))).toBe('first');
    expect(made).toBe(1);
    expect(keptText(value, 'b', make('other kind'))).toBe('other kind');
    expect(keptText({ tools: ['read'] }, 'a', make('equal value, another object'))).toBe('equal value, another object');
    expect(made).toBe(3);
  });
});
