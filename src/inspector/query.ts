/**
 * The `/api/` query strings, read and checked: an unknown value is a 400 naming the parameter,
 * never a silent default.
 */
import { ProxyError } from '../core/errors.js';

export type Period = '1h' | '24h' | '7d' | 'all';
export const PERIODS: Record<Period, number | undefined> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 604_800_000, all: undefined };

export const SORTS = ['last_active', 'cost', 'savings', 'requests', 'cache_share', 'prompt_tokens'] as const;
export type Sort = (typeof SORTS)[number];

type Query = Record<string, string | string[] | undefined>;

export function one(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw bad(name, `give ${name} once`);
  return value === '' ? undefined : value;
}

export function period(query: Query, fallback: Period = '24h'): Period {
  const value = one(query, 'period') ?? fallback;
  if (!Object.hasOwn(PERIODS, value)) throw bad('period', `period must be one of ${Object.keys(PERIODS).join(', ')}`);
  return value as Period;
}

export function choice<T extends string>(query: Query, name: string, allowed: readonly T[], fallback: T): T {
  const value = one(query, name) ?? fallback;
  if (!allowed.includes(value as T)) throw bad(name, `${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function integer(query: Query, name: string, fallback: number, max: number): number {
  const text = one(query, name);
  if (text === undefined) return fallback;
  if (!/^\d{1,9}$/.test(text)) throw bad(name, `${name} must be a whole number from 0`);
  const n = Number(text);
  if (n > max) throw bad(name, `${name} may be at most ${max}`);
  return n;
}

function bad(param: string, detail: string): ProxyError {
  return new ProxyError('invalid_request', { detail }, { param });
}
