/**
 * `proxy keys add|list|revoke|set-budget` (docs/scaling.md, Keys without restarts): client keys in
 * the database, seen by every replica within `[store] key_refresh_seconds`. A new key is printed
 * once, when it is made; only its SHA-256 is stored. The config's `[auth] keys` still work beside
 * them (a config key's name wins). With the file store the keys are the config's: `list --config`
 * shows them and what each spent, from the spend ledger (proxy/spend-ledger.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../config/load.js';
import type { BudgetPeriod, ClientKey } from '../config/types.js';
import { ProxyError } from '../core/errors.js';
import { periodStart } from '../proxy/budget-period.js';
import { ClientLimits } from '../proxy/client-limits.js';
import { LEDGER_FILE, parseLedger } from '../proxy/spend-ledger.js';
import type { KeyStore, StoredKey } from '../store/types.js';
import { intArg, parse } from './args.js';
import { STORE_OPTIONS, storeFromArgs, withStore } from './store-arg.js';

const HELP = `usage: proxy keys add NAME [--budget USD] [--period day|month|total] [--rpm N] [--models A,B] [--admin]
       proxy keys list [--json]   (with --config, the config's keys too; with the file store, only they)
       proxy keys revoke NAME
       proxy keys set-budget NAME USD|none [--period day|month|total]
  each with [--config PATH | --store postgres [--url-env VAR]]`;

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

export async function keysCommand(args: string[], out: (text: string) => void = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals } = parse(args, {
    ...STORE_OPTIONS,
    config: { type: 'string' },
    budget: { type: 'string' },
    period: { type: 'string' },
    rpm: { type: 'string' },
    models: { type: 'string' },
    admin: { type: 'boolean' },
    json: { type: 'boolean' },
  }, HELP);
  const [verb, name, amount] = positionals;
  if (values.help === true || verb === undefined) {
    out(HELP + '\n');
    return verb === undefined && values.help !== true ? 2 : 0;
  }
  const config = values.config === undefined ? undefined : loadConfig({ path: values.config, env: process.env });
  const store = await storeFromArgs(values, config, values.store === undefined && config === undefined ? 'postgres' : undefined);
  return withStore(store, async (s) => {
    if (s.keys !== undefined) return run(s.keys, config?.auth.keys ?? [], verb, name, amount, values, out);
    if (verb === 'list' && config !== undefined) {
      const listed = await configKeys(config.auth.keys, values['data-dir'] as string | undefined ?? config.dataDir, Date.now());
      out(values.json === true ? JSON.stringify({ keys: listed.map(({ sha256: _, ...k }) => k) }, null, 2) + '\n' : render(listed) + '\n');
      return 0;
    }
    throw new ProxyError('bad_argument', { detail: 'with the file store, client keys are the config\'s [auth] keys: `proxy keys list --config PATH` shows them and what each spent; add, revoke and set-budget are for keys kept in PostgreSQL ([store] kind = "postgres")' });
  });
}

/**
 * The config's keys, each with what it spent in its budget's current window: the spend ledger read
 * by the proxy's own count (ClientLimits), as a proxy starting now would hold it.
 */
async function configKeys(keys: readonly ClientKey[], dataDir: string, now: number): Promise<Listed[]> {
  const text = await readFile(join(dataDir, LEDGER_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  const limits = new ClientLimits(keys, parseLedger(text).entries, { now: () => now });
  return keys.map((k) => ({ ...k, createdAt: undefined, revokedAt: undefined, spent: limits.spent(k) }));
}

/**
 * `configKeys`: the config's `[auth] keys` (with `--config`), listed before the stored ones; a stored
 * key of a config key's name is listed as shadowed, as the proxy takes the config's (ClientAuth).
 * Every replica charges the shared ledger by key name, so each spend is the database's.
 */
async function run(keys: KeyStore, configKeys: readonly ClientKey[], verb: string, name: string | undefined, amount: string | undefined, values: Record<string, string | boolean | undefined>, out: (text: string) => void): Promise<number> {
  const period = periodArg(values.period as string | undefined);
  if (verb === 'list') {
    const now = Date.now();
    const named = new Set(configKeys.map((k) => k.name));
    const all: (Omit<Listed, 'spent'>)[] = [
      ...configKeys.map((k) => ({ ...k, createdAt: undefined, revokedAt: undefined })),
      ...(await keys.list()).map((k) => (named.has(k.name) ? { ...k, shadowed: true as const } : k)),
    ];
    const listed = await Promise.all(all.map(async (k) => ({ ...k, spent: await keys.spent(k.name, periodStart(k.budgetPeriod, now)) })));
    out(values.json === true ? JSON.stringify({ keys: listed.map(({ sha256: _, ...k }) => k) }, null, 2) + '\n' : render(listed) + '\n');
    return 0;
  }
  if (name === undefined || !NAME.test(name)) throw new ProxyError('bad_argument', { detail: `${verb} needs a key name of letters, digits, ".", "_" and "-" (a metrics label)\n${HELP}` });
  if (verb === 'add') {
    const key = `pp-${randomBytes(24).toString('base64url')}`;
    const budget = values.budget === undefined ? undefined : usdArg(values.budget as string);
    await keys.add({
      name, sha256: createHash('sha256').update(key).digest('hex'), budgetPeriod: period ?? 'month',
      models: typeof values.models === 'string' ? values.models.split(',').map((m) => m.trim()).filter((m) => m !== '') : undefined,
      ...(budget === undefined ? {} : { budgetUsd: budget }),
      ...(values.rpm === undefined ? {} : { requestsPerMinute: intArg('--rpm', values.rpm as string) }),
      ...(values.admin === true ? { admin: true as const } : {}),
    });
    out(values.json === true ? JSON.stringify({ name, key }) + '\n' : `${key}\nkey "${name}" made: this is the only time it is shown; every replica takes it within seconds\n`);
    return 0;
  }
  if (verb === 'revoke') {
    await keys.revoke(name);
    out(`key "${name}" revoked\n`);
    return 0;
  }
  if (verb === 'set-budget') {
    if (amount === undefined) throw new ProxyError('bad_argument', { detail: `set-budget needs an amount in USD, or none\n${HELP}` });
    await keys.setBudget(name, amount === 'none' ? undefined : usdArg(amount), period);
    out(`key "${name}": budget ${amount === 'none' ? 'none' : `${amount} USD`}${period === undefined ? '' : ` a ${period}`}\n`);
    return 0;
  }
  throw new ProxyError('bad_argument', { detail: `unknown keys command ${JSON.stringify(verb)}\n${HELP}` });
}

function usdArg(value: string): number {
  const usd = Number(value);
  if (value.trim() === '' || !Number.isFinite(usd) || usd < 0) throw new ProxyError('bad_argument', { detail: `a budget is a number of USD >= 0, got ${JSON.stringify(value)}` });
  return usd;
}

function periodArg(value: string | undefined): BudgetPeriod | undefined {
  if (value === undefined || value === 'day' || value === 'month' || value === 'total') return value;
  throw new ProxyError('bad_argument', { detail: `--period must be day, month or total, got ${JSON.stringify(value)}` });
}

/**
 * A key as listed: made by `proxy keys add` (its dates), or the config's (none). `shadowed`: a
 * stored key the config's key of the same name overrides.
 */
type Listed = Omit<StoredKey, 'createdAt'> & { createdAt: string | undefined; spent: number; shadowed?: true };

function render(keys: readonly Listed[]): string {
  if (keys.length === 0) return 'no keys';
  const rows = keys.map((k) => [
    k.name,
    k.createdAt === undefined ? 'config' : k.revokedAt !== undefined ? `revoked ${k.revokedAt.slice(0, 16).replace('T', ' ')}` : k.shadowed === true ? 'shadowed by config' : 'live',
    k.budgetUsd === undefined ? '-' : `${k.budgetUsd} / ${k.budgetPeriod}`,
    `${Math.round(k.spent * 1e4) / 1e4}`,
    k.requestsPerMinute === undefined ? '-' : String(k.requestsPerMinute),
    k.models?.join(',') ?? 'all',
    k.createdAt === undefined ? '-' : k.createdAt.slice(0, 16).replace('T', ' '),
  ]);
  const header = ['name', 'state', 'budget USD', `spent (${'this period'})`, 'rpm', 'models', 'created'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
