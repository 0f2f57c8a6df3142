/**
 * The simulator is a second implementation of every wire: each module specifier in src/sim names
 * a file inside src/sim or a node: built-in (eslint.config.js says the same at lint time; this
 * also catches what a lint run was not asked to see).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SIM = join(import.meta.dirname, '..', '..', 'src', 'sim');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('src/sim owes nothing to the proxy', () => {
  it('imports only src/sim and node: built-ins', () => {
    const outside: string[] = [];
    for (const file of files(SIM)) {
      const text = readFileSync(file, 'utf8');
      for (const [, spec] of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)) {
        if (spec === undefined || spec.startsWith('node:')) continue;
        const inside = spec.startsWith('.') && !relative(SIM, resolve(file, '..', spec)).startsWith('..');
        if (!inside) outside.push(`${relative(SIM, file)}: ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
