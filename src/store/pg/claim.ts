/**
 * The statement that claims a session for a turn (migrations.ts: claim_session, and
 * claim_session_admitting with a client key's admission before the lock): what others appended
 * since `after`, and the ledger's answer when an admission was asked. Refused, no lock was taken.
 */
import type pg from 'pg';
import type { LedgerAdmission, LedgerAnswer } from '../types.js';
import { admitParams, answerOf } from './client-ledger.js';
import type { EventRow } from './rows.js';

export type Claimed =
  | { refused: false; rows: EventRow[]; admitted: LedgerAnswer | undefined }
  | { refused: true; admitted: LedgerAnswer };

type AdmittingRow = EventRow & { a_usd: number; a_took: boolean | null; a_tokens: number | null };

export async function claimSession(client: pg.PoolClient, id: string, after: number, admission: LedgerAdmission | undefined): Promise<Claimed> {
  if (admission === undefined) {
    const { rows } = await client.query<EventRow>('SELECT seq, off, line FROM claim_session($1, $2)', [id, after]);
    return { refused: false, rows, admitted: undefined };
  }
  const { rows } = await client.query<AdmittingRow>('SELECT * FROM claim_session_admitting($1, $2, $3, $4::date, $5, $6, $7)', [id, after, ...admitParams(admission)]);
  // The admission's answer is the first row; the events follow it.
  const first = rows[0]!;
  const admitted = answerOf({ usd: first.a_usd, took: first.a_took, tokens: first.a_tokens }, admission);
  // As the function decides: over budget, or no token.
  if ((admission.budgetUsd !== undefined && admitted.spent >= admission.budgetUsd) || admitted.waitMs > 0) return { refused: true, admitted };
  return { refused: false, rows: rows.slice(1), admitted };
}
