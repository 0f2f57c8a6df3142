/**
 * The rooms of src/ import only what docs/architecture.md section 2 says they may: the table is
 * read from the doc, every import between rooms is read from the code, and each must be allowed.
 * A room missing from the table fails too, so the table stays the map of the code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

/** Room -> rooms it may import, from the table's rows `| \`src/room\` | job | may import |`. */
function allowedByDoc(): Map<string, Set<string> | 'all above'> {
  const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `src\/([a-z-]+)` \|.*\| ([^|]+) \|$/gm)];
  const order: string[] = [];
  const out = new Map<string, Set<string> | 'all above'>();
  for (const [, room, may] of rows) {
    const text = may!.trim();
    out.set(room!, text === 'all above' ? 'all above' : new Set(text === 'nothing of ours' ? [] : text.split(',').map((s) => s.trim())));
    order.push(room!);
  }
  // "all above": every room listed before it.
  for (const [i, room] of order.entries()) if (out.get(room) === 'all above') out.set(room, new Set(order.slice(0, i)));
  return out;
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every (room, imported room, file) for imports that cross rooms. */
function crossings(): { from: string; to: string; file: string }[] {
  const out: { from: string; to: string; file: string }[] = [];
  for (const file of files(SRC)) {
    const from = relative(SRC, file).split('/')[0]!;
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from '(\.[^']+)'/gm)) {
      const target = relative(SRC, join(file, '..', spec!)).split('/')[0]!;
      if (target !== from && !target.startsWith('..')) out.push({ from, to: target, file: relative(ROOT, file) });
    }
  }
  return out;
}

describe('layering (docs/architecture.md section 2)', () => {
  const table = allowedByDoc();

  it('names every room of src/', () => {
    const rooms = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(rooms.filter((r) => !table.has(r))).toEqual([]);
  });

  it('every import between rooms is one the table allows', () => {
    const bad = crossings().filter(({ from, to }) => {
      const may = table.get(from);
      return may !== undefined && may !== 'all above' && !may.has(to);
    });
    expect(bad.map((b) => `${b.file}: ${b.from} -> ${b.to}`)).toEqual([]);
  });
});
