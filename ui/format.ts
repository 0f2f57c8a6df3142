/** How the page writes figures. Unknown (null) is written "unknown", never 0. */
const INT = new Intl.NumberFormat('en-US');

export const UNKNOWN = 'unknown';

export function int(n: number | null | undefined): string {
  return n === null || n === undefined ? UNKNOWN : INT.format(n);
}

/** A 0..1 share as a percentage with one decimal. */
export function pct(share: number | null | undefined): string {
  return share === null || share === undefined ? UNKNOWN : `${(share * 100).toFixed(1)}%`;
}

/** Dollars: cents above $1, four significant digits below (a request costs fractions of a cent). */
export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return UNKNOWN;
  if (n === 0) return '$0';
  const abs = Math.abs(n);
  return abs >= 1 ? `$${n.toFixed(2)}` : `$${n.toPrecision(4).replace(/0+$/, '').replace(/\.$/, '')}`;
}

export function ms(n: number | null | undefined): string {
  return n === null || n === undefined ? UNKNOWN : `${INT.format(Math.round(n))} ms`;
}

/** A timestamp in the reader's time zone, to the second. */
export function time(ts: string | number | null | undefined): string {
  if (ts === null || ts === undefined) return UNKNOWN;
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? String(ts) : d.toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'medium' });
}

/** A break cause in words: `client_rewrite` -> `client rewrite`. */
export function cause(c: string | null | undefined): string {
  return c === null || c === undefined ? UNKNOWN : c.replaceAll('_', ' ');
}

/** A cause that ended the cached prefix (not the first request, not an extension). */
export function isBreak(c: string | null | undefined): c is string {
  return c !== null && c !== undefined && c !== 'first' && c !== 'none';
}

/** Long ids shown short; the full id stays in the title and the link. */
export function shortId(id: string): string {
  return id.length > 40 ? `${id.slice(0, 36)}…` : id;
}

/** Whether a time the API gave (ISO) has passed; false for none. */
export function passed(at: string | null): boolean {
  return at !== null && Date.parse(at) <= Date.now();
}
