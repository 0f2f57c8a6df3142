/** `[log] format = "text"`: pino's JSON lines as readable ones, nothing lost, nothing added. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { textLine } from '../../src/cli/log-text.js';

/** The lines a real pino logger writes, each turned to text. */
function logged(write: (log: pino.Logger) => void): string[] {
  const lines: string[] = [];
  const log = pino({ level: 'info', base: { service: 'prefix-proxy' } }, { write: (line: string) => lines.push(textLine(line)) });
  write(log);
  return lines;
}

describe('text log lines', () => {
  it('a request line: time, level, message, then its fields as key=value in order', () => {
    const [line] = logged((log) => log.info({ method: 'POST', path: '/v1/chat/completions', status: 200, total_ms: 41.2, route: 'claude', cause: 'none', stream: true }, 'request'));
    expect(line).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO request method=POST path=\/v1\/chat\/completions status=200 total_ms=41.2 route=claude cause=none stream=true\n$/);
    expect(line).not.toContain('service=');
  });

  it('quotes values with spaces or quotes, so a line still splits on spaces', () => {
    const [line] = logged((log) => log.warn({ file: 'a b.jsonl', note: 'say "hi"' }, 'set aside'));
    expect(line).toContain(' WARN set aside file="a b.jsonl" note="say \\"hi\\""');
  });

  it('an error keeps its type, message and stack (the stack on the lines below)', () => {
    const err = new TypeError('boom');
    const [line] = logged((log) => log.error(err));
    expect(line).toContain(' ERROR boom err="TypeError: boom"\n');
    expect(line).toContain('at ');
    expect(line!.split('\n').length).toBeGreaterThan(2);
  });

  it('a line that is not JSON passes as it is', () => {
    expect(textLine('plain words')).toBe('plain words\n');
  });
});
