/** The body memos' one promise, checked the same way for both: JSON.parse's value, key order included, or its own error. */
import { expect } from 'vitest';

export function expectParsedAsJson(parse: (body: Buffer) => unknown, body: Buffer): unknown {
  let want: unknown;
  try {
    want = JSON.parse(body.toString('utf8'));
  } catch (err) {
    expect(() => parse(body)).toThrow((err as Error).message);
    return undefined;
  }
  const got = parse(body);
  expect(got).toEqual(want);
  // Key order too: the body's fields may be passed on in the order the client wrote them.
  expect(JSON.stringify(got)).toBe(JSON.stringify(want));
  return got;
}
