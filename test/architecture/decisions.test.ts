/**
 * docs/decisions.md is the index of the decision records in docs/decisions/: every record is
 * listed there with its own title, and every entry names a file that exists.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const DIR = join(process.cwd(), 'docs', 'decisions');

it('lists every record under its title, and nothing else', () => {
  const index = readFileSync(join(process.cwd(), 'docs', 'decisions.md'), 'utf8');
  const listed = [...index.matchAll(/^- \[(.+)\]\(decisions\/([^)]+)\)$/gm)].map((m) => ({ title: m[1]!, file: m[2]! }));
  const files = readdirSync(DIR).filter((f) => f.endsWith('.md')).sort();
  expect(listed.map((l) => l.file).sort()).toStrictEqual(files);
  for (const { title, file } of listed) {
    const heading = readFileSync(join(DIR, file), 'utf8').split('\n', 1)[0]!;
    expect(heading, file).toMatch(/^# \d{4}\. /);
    expect(heading.replace(/^# \d{4}\. /, ''), file).toBe(title);
    expect(file.slice(0, 4), file).toBe(heading.slice(2, 6));
  }
  // One number, one record.
  expect(new Set(files.map((f) => f.slice(0, 4))).size).toBe(files.length);
});
