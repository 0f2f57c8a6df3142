/** The GenAI attribute names copied into src/tracing/semconv.ts are the conventions' own. */
import * as upstream from '@opentelemetry/semantic-conventions/incubating';
import { expect, it } from 'vitest';
import * as copied from '../../src/tracing/semconv.js';

it('each copied attribute name is the value semantic-conventions gives it', () => {
  const names = Object.keys(copied);
  expect(names.length).toBeGreaterThan(10);
  for (const name of names) expect([name, (copied as Record<string, string>)[name]]).toEqual([name, (upstream as Record<string, unknown>)[name]]);
});
