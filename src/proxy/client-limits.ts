/**
 * Each client key's budget and request rate (docs/decisions.md, Client budgets). A request is
 * admitted while the key's spend in the current window is below its budget and its bucket holds a
 * token; a reply's cost is added once the reply is logged, and written to the spend ledger with the
 * log's durability, so a restarted proxy counts it. On PostgreSQL both are kept in the database
 * instead, shared by the replicas (src/store/pg/client-ledger.ts). Time is passed in, so tests
 * drive the windows.
 */
import type { Route } from '../config/routes.js';
import type { ClientKey } from '../config/types.js';
import { ProxyError } from '../core/errors.js';
import type { Usage } from '../core/types.js';
import type { Metrics } from '../metrics/registry.js';
import { totalCost } from '../pricing/cost.js';
import { periodEnd, periodStart } from './budget-period.js';
import type { TurnAdmission } from '../session/manager.js';
import type { ClientLedger, LedgerAdmission, LedgerAnswer, LedgerCharge } from '../store/types.js';
import type { SpendEntry } from './spend-ledger.js';
import { TokenBucket } from './token-bucket.js';

/** Where charges go to survive a restart (the spend ledger). */
export interface SpendSink {
  append(entry: SpendEntry): void;
  /** Resolves once every entry appended before the call is as durable as the log's answers. */
  sync(): Promise<void>;
}

interface KeyState {
  /** Start of the budget window `usd` counts, ms. */
  start: number;
  usd: number;
  bucket: TokenBucket | undefined;
}

export interface ClientLimitsOptions {
  now: () => number;
  ledger?: SpendSink;
  /** The store's ledger shared by replicas (PostgreSQL): budgets and rates are read and kept there instead. */
  shared?: ClientLedger;
  metrics?: Pick<Metrics, 'clientSpend' | 'clientRefused'>;
}

export class ClientLimits {
  readonly #state = new Map<string, KeyState>();
  readonly #opts: ClientLimitsOptions;

  /** `spent`: the ledger's entries, read at startup; those of the keys' current windows count. */
  constructor(keys: readonly ClientKey[], spent: readonly SpendEntry[], opts: ClientLimitsOptions) {
    this.#opts = opts;
    const now = opts.now();
    for (const key of keys) {
      const bucket = key.requestsPerMinute === undefined ? undefined : new TokenBucket(key.requestsPerMinute, now);
      this.#state.set(key.name, { start: periodStart(key.budgetPeriod, now), usd: 0, bucket });
    }
    for (const entry of spent) {
      const state = this.#state.get(entry.client);
      if (state !== undefined && entry.ts >= state.start) state.usd += entry.usd;
    }
  }

  /**
   * Throws (or rejects, with a shared ledger) a 429 when the key is over its budget
   * (`budget_exceeded`) or its rate (`rate_limited`).
   */
  admit(key: ClientKey | undefined): void | Promise<void> {
    if (key === undefined) return;
    if (this.#opts.shared !== undefined) return key.budgetUsd === undefined && key.requestsPerMinute === undefined ? undefined : this.#admitShared(key, this.#opts.shared);
    const now = this.#opts.now();
    const state = this.#current(key, now);
    if (key.budgetUsd !== undefined && state.usd >= key.budgetUsd) {
      this.#opts.metrics?.clientRefused.inc({ client: key.name, reason: 'budget' });
      throw budgetExceeded(key, state.usd, now);
    }
    const wait = state.bucket?.take(now) ?? 0;
    if (wait > 0) throw this.#rateLimited(key, wait);
  }

  /**
   * On a shared ledger, a limited key's admission to ask with its session's claim (one statement
   * for both, TurnAdmission); undefined when there is nothing to ask there.
   */
  inClaim(key: ClientKey | undefined): TurnAdmission | undefined {
    const shared = this.#opts.shared;
    if (key === undefined || shared === undefined || (key.budgetUsd === undefined && key.requestsPerMinute === undefined)) return undefined;
    const now = this.#opts.now();
    return {
      query: this.#query(key, now),
      decide: (answer) => this.#decide(key, answer, now),
      alone: () => this.#admitShared(key, shared),
    };
  }

  /** One statement on the shared ledger: the key's spend in its window, and a token from its bucket when under budget. */
  async #admitShared(key: ClientKey, shared: ClientLedger): Promise<void> {
    const now = this.#opts.now();
    this.#decide(key, await shared.admit(this.#query(key, now)), now);
  }

  #query(key: ClientKey, now: number): LedgerAdmission {
    return { client: key.name, from: periodStart(key.budgetPeriod, now), budgetUsd: key.budgetUsd, perMinute: key.requestsPerMinute, now };
  }

  #decide(key: ClientKey, { spent, waitMs }: LedgerAnswer, now: number): void {
    if (key.budgetUsd !== undefined && spent >= key.budgetUsd) {
      this.#opts.metrics?.clientRefused.inc({ client: key.name, reason: 'budget' });
      throw budgetExceeded(key, spent, now);
    }
    if (waitMs > 0) throw this.#rateLimited(key, waitMs);
  }

  #rateLimited(key: ClientKey, waitMs: number): ProxyError {
    this.#opts.metrics?.clientRefused.inc({ client: key.name, reason: 'rate' });
    const seconds = Math.ceil(waitMs / 1000);
    return new ProxyError('rate_limited', { name: key.name, limit: key.requestsPerMinute!, seconds }, { headers: { 'retry-after': String(seconds) } });
  }

  /**
   * On a shared ledger, what a reply adds to its key's spend, for the caller to commit with the
   * reply's events (SessionWriter.endTurn) and then count with `charge(..., true)`; else undefined.
   */
  sharedCharge(key: ClientKey | undefined, route: Pick<Route, 'price'>, usage: Usage | undefined): LedgerCharge | undefined {
    if (key === undefined || this.#opts.shared === undefined) return undefined;
    const usd = totalCost(route.price, usage)?.usd;
    return usd === undefined || usd <= 0 ? undefined : { client: key.name, ts: this.#opts.now(), usd };
  }

  /**
   * A logged reply's cost, at the route's prices (else as the provider reported it; unknown counts
   * 0), onto the key's spend and into the ledger; resolves once the ledger holds it durably.
   * `written`: the shared ledger has it already (committed with the reply, `sharedCharge`).
   */
  async charge(key: ClientKey | undefined, route: Pick<Route, 'price'>, usage: Usage | undefined, written = false): Promise<void> {
    if (key === undefined) return;
    const usd = totalCost(route.price, usage)?.usd;
    if (usd === undefined) return;
    const now = this.#opts.now();
    this.#current(key, now).usd += usd;
    this.#opts.metrics?.clientSpend.inc({ client: key.name }, usd);
    if (usd > 0 && this.#opts.shared !== undefined) return written ? undefined : this.#opts.shared.charge({ client: key.name, ts: now, usd });
    if (usd <= 0 || this.#opts.ledger === undefined) return;
    this.#opts.ledger.append({ ts: now, client: key.name, usd });
    await this.#opts.ledger.sync();
  }

  /** USD the key has spent in its current window, as this process has counted it (with a shared ledger: its own charges only). */
  spent(key: ClientKey): number {
    return this.#current(key, this.#opts.now()).usd;
  }

  /** The key's state, its window moved on (and its spend reset) when a new one has begun. */
  #current(key: ClientKey, now: number): KeyState {
    let state = this.#state.get(key.name);
    if (state === undefined) {
      state = { start: periodStart(key.budgetPeriod, now), usd: 0, bucket: undefined };
      this.#state.set(key.name, state);
    }
    const start = periodStart(key.budgetPeriod, now);
    if (start > state.start) {
      state.start = start;
      state.usd = 0;
    }
    return state;
  }
}

function budgetExceeded(key: ClientKey, spent: number, now: number): ProxyError {
  const end = periodEnd(key.budgetPeriod, now);
  const period = key.budgetPeriod === 'total' ? 'all time' : `this ${key.budgetPeriod} (UTC)`;
  const reset = end === undefined ? 'it does not reset' : `it resets at ${new Date(end).toISOString()}`;
  // Clients that honour x-should-retry (the OpenAI and Anthropic SDKs) do not retry what no retry can fix.
  const headers: Record<string, string> = { 'x-should-retry': 'false' };
  if (end !== undefined) headers['retry-after'] = String(Math.ceil((end - now) / 1000));
  return new ProxyError('budget_exceeded', { name: key.name, spent: round(spent), budget: round(key.budgetUsd!), period, reset }, { headers });
}

function round(usd: number): number {
  return Math.round(usd * 1e4) / 1e4;
}
