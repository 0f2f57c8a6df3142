/**
 * The peers bench keeps the file-writing targets' data under one parent marked a top directory
 * (ext4 then spreads what is made in it away from files removed minutes before), keeps every
 * directory until the measurement ends, and removes them all then.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCost, dataDir, dataParent, removeDataDirs } from '../../bench/data-dirs.js';
import { fileSystemOf } from '../../bench/peers/targets.js';

afterEach(removeDataDirs);

describe('peers data directories', () => {
  it('are made under one parent in the temp directory, kept until removeDataDirs, then gone with it', async () => {
    const a = await dataDir('t-a-');
    const b = await dataDir('t-b-');
    const parent = dataParent().dir;
    expect(dirname(a)).toBe(parent);
    expect(dirname(b)).toBe(parent);
    expect(dirname(parent)).toBe(tmpdir());
    expect(createCost(20)).toBeGreaterThan(0);
    expect(readdirSync(parent)).toHaveLength(3);
    await removeDataDirs();
    expect([existsSync(a), existsSync(b), existsSync(parent)]).toStrictEqual([false, false, false]);
    // A measurement after that gets a parent of its own.
    expect(dataParent().dir).not.toBe(parent);
  });

  it('marks the parent a top directory where the file system has the flag (ext4)', { skip: !/^ext/.test(fileSystemOf(tmpdir())) }, () => {
    const { dir, topDir } = dataParent();
    expect(topDir).toBe(true);
    expect(execFileSync('lsattr', ['-d', dir], { encoding: 'utf8' }).split(' ')[0]).toContain('T');
  });

  it('puts a directory elsewhere when asked (the tmpfs row), and still removes it', async () => {
    const elsewhere = await dataDir('t-elsewhere-', tmpdir());
    expect(dirname(elsewhere)).toBe(tmpdir());
    await removeDataDirs();
    expect(existsSync(elsewhere)).toBe(false);
  });
});
