import { describe, expect, it } from 'vitest';
import { DEFAULT_VOLATILE_LINES } from '../../src/config/build.js';
import { dropVolatileLines, withoutVolatile } from '../../src/window/volatile-lines.js';

const patterns = DEFAULT_VOLATILE_LINES.map((s) => new RegExp(s));
const prompt = (line: string) => `${line}\n\nYou are Claude Code.\nx-anthropic-billing-header is named here, mid-line, and stays.`;

describe('volatile lines', () => {
  it('takes Claude Code\'s attribution line out, with or without a nonce, so every request has the same prompt', () => {
    const texts = [
      prompt('x-anthropic-billing-header: cc_version=2.1.328.a1b; cc_entrypoint=sdk-cli;'),
      prompt('x-anthropic-billing-header: cc_version=2.1.36.f00; cc_entrypoint=cli; cch=1a2b3;'),
      prompt('x-anthropic-billing-header: cc_version=2.1.36.f00; cc_entrypoint=cli; cch=9z8y7;'),
    ].map((t) => dropVolatileLines(t, patterns));
    expect(new Set(texts).size).toBe(1);
    expect(texts[0]).toBe('You are Claude Code.\nx-anthropic-billing-header is named here, mid-line, and stays.');
  });

  it('gives a prompt seen again what it gave, and the same prompt under other patterns their own', () => {
    const text = prompt('x-anthropic-billing-header: cc_version=2.1.36.f00; cc_entrypoint=cli; cch=1a2b3;');
    const once = dropVolatileLines(text, patterns);
    expect(dropVolatileLines(text.slice(0), patterns)).toBe(once);
    expect(dropVolatileLines(text, [/^You are/])).toBe(text.replace('\nYou are Claude Code.', ''));
    expect(dropVolatileLines(text, [])).toBe(text);
    expect(dropVolatileLines(text, patterns)).toBe(once);
  });

  it('leaves a prompt without such a line as it was, and system messages lose theirs too', () => {
    expect(dropVolatileLines('  keep\n\n', patterns)).toBe('  keep\n\n');
    const req = withoutVolatile({ system: 'a', messages: [{ role: 'system', content: 'x-anthropic-billing-header: cch=1;\nb' }, { role: 'user', content: 'x-anthropic-billing-header: user text stays' }] }, patterns);
    expect(req.messages).toStrictEqual([{ role: 'system', content: 'b' }, { role: 'user', content: 'x-anthropic-billing-header: user text stays' }]);
    expect(withoutVolatile(req, [])).toBe(req);
  });
});
