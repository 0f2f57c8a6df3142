/**
 * `proxy keys list --config` with the file store: the config's keys, each with what it spent in
 * its budget's current window, read from the spend ledger the proxy writes (client-spend.jsonl).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { periodStart } from '../../src/proxy/budget-period.js';
import { ledgerLine, LEDGER_FILE } from '../../src/proxy/spend-ledger.js';
import { proxy } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'pp-keys-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('proxy keys list with the file store', () => {
  it('counts each key\'s spend from the start of its window: the day, the month, all time', () => {
    const now = Date.now();
    const day = periodStart('day', now);
    const month = periodStart('month', now);
    const keys = ['daily', 'monthly', 'forever'];
    const periods = { daily: 'day', monthly: 'month', forever: 'total' } as const;
    writeFileSync(join(dir, 'config.toml'), `data_dir = "${join(dir, 'data')}"

[auth]
keys = [
${keys.map((k, i) => `  { name = "${k}", sha256 = "${String(i).repeat(64)}", budget_usd = 5, budget_period = "${periods[k as keyof typeof periods]}" },`).join('\n')}
  { name = "unlimited", sha256 = "${'9'.repeat(64)}" },
]
`);
    // For each key: 1 USD today, 10 the moment before today began, 100 the moment before this month began.
    const lines = keys.flatMap((client) => [
      { ts: day, client, usd: 1 },
      { ts: day - 1, client, usd: 10 },
      { ts: month - 1, client, usd: 100 },
    ]);
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, LEDGER_FILE), lines.map(ledgerLine).join('') + '{"ts":"not a time","client":"daily","usd":1000}\n');
    const r = proxy(['keys', 'list', '--json', '--config', join(dir, 'config.toml')]);
    expect(r.code, r.stderr).toBe(0);
    const spent = Object.fromEntries((JSON.parse(r.stdout) as { keys: { name: string; spent: number }[] }).keys.map((k) => [k.name, k.spent]));
    // The moment before today is in this month unless today is the month's first day.
    expect(spent).toEqual({ daily: 1, monthly: day > month ? 11 : 1, forever: 111, unlimited: 0 });
    expect(r.stdout).not.toContain('sha256');
  });

  it('add, revoke and set-budget say where file-store keys live; a list without --config too', () => {
    const add = proxy(['keys', 'add', 'x', '--config', join(dir, 'config.toml')]);
    expect(add.code).toBe(2);
    expect(add.stderr).toContain("the config's [auth] keys");
    const bare = proxy(['keys', 'list', '--store', 'files', '--data-dir', dir]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('proxy keys list --config PATH');
  });
});
