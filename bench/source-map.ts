/**
 * Where a compiled position came from: reads the `.js.map` beside a built file (source map v3,
 * as tsc writes them) and maps a 0-based line and column back to the TypeScript source.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

interface Segment {
  column: number;
  source: number;
  line: number;
}

interface LoadedMap {
  sources: string[];
  /** Segments of each generated line, in column order. */
  lines: Segment[][];
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const cache = new Map<string, LoadedMap | null>();

/** The original file and 1-based line of a position in a built file, or undefined without a map. */
export function originalPosition(file: string, line: number, column: number): { file: string; line: number } | undefined {
  const map = load(file);
  const segments = map?.lines[line];
  if (map === undefined || segments === undefined || segments.length === 0) return undefined;
  let best = segments[0]!;
  for (const s of segments) if (s.column <= column) best = s;
  return { file: map.sources[best.source]!, line: best.line + 1 };
}

function load(file: string): LoadedMap | undefined {
  if (!cache.has(file)) {
    const path = `${file}.map`;
    if (!existsSync(path)) cache.set(file, null);
    else {
      const raw = JSON.parse(readFileSync(path, 'utf8')) as { sources: string[]; sourceRoot?: string; mappings: string };
      const root = resolve(dirname(path), raw.sourceRoot ?? '');
      cache.set(file, { sources: raw.sources.map((s) => resolve(root, s)), lines: decode(raw.mappings) });
    }
  }
  return cache.get(file) ?? undefined;
}

/** Decodes `mappings`: fields are base64 VLQ, relative to the previous segment (the column to the previous one on its line). */
function decode(mappings: string): Segment[][] {
  const lines: Segment[][] = [];
  let source = 0;
  let line = 0;
  for (const text of mappings.split(';')) {
    const segments: Segment[] = [];
    let column = 0;
    for (const seg of text.split(',')) {
      if (seg === '') continue;
      const f = vlq(seg);
      column += f[0]!;
      if (f.length >= 4) {
        source += f[1]!;
        line += f[2]!;
        segments.push({ column, source, line });
      }
    }
    lines.push(segments);
  }
  return lines;
}

function vlq(text: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of text) {
    const digit = B64.indexOf(ch);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}
