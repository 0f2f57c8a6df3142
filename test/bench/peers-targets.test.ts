/**
 * The peers bench names the file system a target's data directory is on (the tmpfs row needs one
 * at /dev/shm): by name for the known ones, and says so where it cannot tell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileSystemOf } from '../../bench/peers/targets.js';

describe('peers targets, the file system of a directory', () => {
  it('names tmpfs at /dev/shm on Linux', { skip: process.platform !== 'linux' }, () => {
    expect(fileSystemOf('/dev/shm')).toBe('tmpfs');
  });

  it('says it cannot tell for a directory that is not there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'peers-fs-'));
    rmSync(dir, { recursive: true });
    expect(fileSystemOf(dir)).toBe('file system unknown');
  });

  it('names a directory\'s file system the same as its parent\'s', () => {
    const dir = mkdtempSync(join(tmpdir(), 'peers-fs-'));
    try {
      expect(fileSystemOf(dir)).toBe(fileSystemOf(tmpdir()));
      expect(fileSystemOf(dir)).not.toBe('file system unknown');
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
