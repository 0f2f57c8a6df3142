/**
 * The database schema, one numbered step at a time (docs/scaling.md, Schema). Steps are never
 * edited once released: a change is a new step. `migrate.ts` applies the ones a database lacks,
 * in order, each in its own transaction, and records it in `schema_migrations`.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'init',
    sql: `
-- One row per session log. index: what the file store keeps in its sidecar (start point, entry,
-- log size), written as the session leaves a replica's memory. entry: what locates the session,
-- published in the transaction of each batch of its events; entry_rev orders the publications so
-- replicas read only what changed since they last looked.
CREATE TABLE sessions (
  id         text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  index      jsonb,
  entry      jsonb,
  entry_rev  bigint
);
CREATE SEQUENCE session_entry_rev;
CREATE INDEX sessions_entry_rev ON sessions (entry_rev);
CREATE INDEX sessions_tip ON sessions ((entry->>'tip'));
CREATE INDEX sessions_lineage ON sessions ((entry->>'lineage'));
CREATE INDEX sessions_explicit_ids ON sessions USING gin ((entry->'ids'));

-- One row per event: line is the JSON text the file store writes (without its newline), byte for
-- byte, and off the byte offset that line has in the session's JSONL file, so start points and
-- digests mean the same in both stores. The primary key refuses a second event at one seq: a
-- writer that lost its lock cannot fork the log.
CREATE TABLE events (
  session_id text   NOT NULL REFERENCES sessions (id),
  seq        bigint NOT NULL CHECK (seq > 0),
  off        bigint NOT NULL CHECK (off >= 0),
  type       text   NOT NULL,
  line       text   NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE UNIQUE INDEX events_offset ON events (session_id, off);
`,
  },
  {
    version: 2,
    name: 'client ledger',
    sql: `
-- Client keys' spend, one row per key and UTC day, added to as replies are charged: every replica
-- reads one sum for a budget (day, month or all time), so N replicas enforce one budget.
CREATE TABLE client_spend (
  client text             NOT NULL,
  day    date             NOT NULL,
  usd    double precision NOT NULL,
  PRIMARY KEY (client, day)
);

-- Client keys' request buckets (requests_per_minute): the level at a time (ms since the epoch),
-- refilled and taken from in one statement under the row's lock; took: whether the last asked got one.
CREATE TABLE client_rate (
  client text             PRIMARY KEY,
  tokens double precision NOT NULL,
  at     bigint           NOT NULL,
  took   boolean          NOT NULL DEFAULT true
);
`,
  },
  {
    version: 3,
    name: 'client keys',
    sql: `
-- Client keys made with \`proxy keys add\`, beside the config's [auth] keys: only the key's SHA-256
-- is kept. rev orders the changes (add, revoke, set-budget) so replicas reload only when one happened.
CREATE SEQUENCE client_key_rev;
CREATE TABLE client_keys (
  name                text             PRIMARY KEY,
  sha256              text             NOT NULL UNIQUE,
  models              text[],
  budget_usd          double precision,
  budget_period       text             NOT NULL DEFAULT 'month',
  requests_per_minute integer,
  admin               boolean          NOT NULL DEFAULT false,
  created_at          timestamptz      NOT NULL DEFAULT now(),
  revoked_at          timestamptz,
  rev                 bigint           NOT NULL DEFAULT nextval('client_key_rev')
);
`,
  },
  {
    version: 4,
    name: 'claim in one round trip',
    sql: `
-- A turn's claim: the session's advisory lock, then what others appended after the claimer's last
-- seq. One call, one round trip and one transaction. VOLATILE: the read takes its own snapshot
-- after the lock is granted, so it sees what the previous holder committed while this one waited
-- (one SELECT holding both would read from a snapshot taken before the wait).
CREATE FUNCTION claim_session(p_id text, p_after bigint) RETURNS TABLE (seq bigint, off bigint, line text)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  PERFORM pg_advisory_lock(hashtextextended(p_id, 0));
  RETURN QUERY SELECT e.seq, e.off, e.line FROM events e WHERE e.session_id = p_id AND e.seq > p_after ORDER BY e.seq;
END
$fn$;
`,
  },
  {
    version: 5,
    name: 'images by digest',
    sql: `
-- Images a client sent (src/proxy/images.ts), by the SHA-256 of their bytes: written once, never
-- changed, so replicas on separate machines need no shared volume.
CREATE TABLE blobs (sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'), bytes bytea NOT NULL);
`,
  },
  {
    version: 6,
    name: 'turn in two commits',
    sql: `
-- A turn's appends, the reply's charge and the end of its claim in one call, one commit
-- (session-log.ts): the events, the session's entry, the charge onto the key's day
-- (client-ledger.ts), then the claim given back, last. An unlock takes effect at once, before the
-- commit, so the releaser first takes a second lock on the session, held until its commit ends
-- (transaction-scoped); the next claimer waits for that one (claim_session below), so its catch-up
-- read sees these events. Advisory locks write nothing: a claim stays a read-only transaction.
CREATE FUNCTION append_events(p_id text, p_seq bigint[], p_off bigint[], p_type text[], p_line text[], p_entry jsonb,
  p_release boolean, p_client text, p_day date, p_usd float8) RETURNS void
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  INSERT INTO events (session_id, seq, off, type, line) SELECT p_id, * FROM unnest(p_seq, p_off, p_type, p_line);
  UPDATE sessions SET entry = coalesce(p_entry, entry),
    entry_rev = CASE WHEN p_entry IS NULL THEN entry_rev ELSE nextval('session_entry_rev') END
  WHERE id = p_id;
  IF p_client IS NOT NULL THEN
    INSERT INTO client_spend (client, day, usd) VALUES (p_client, p_day, p_usd)
    ON CONFLICT (client, day) DO UPDATE SET usd = client_spend.usd + EXCLUDED.usd;
  END IF;
  IF p_release THEN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_id, 1));
    PERFORM pg_advisory_unlock(hashtextextended(p_id, 0));
  END IF;
END
$fn$;

-- A client key's admission (client-ledger.ts): its spend in its budget's window and, when under
-- budget, a token from its bucket, refilled and taken under the bucket row's lock.
CREATE FUNCTION client_admit(p_client text, p_from date, p_now bigint, p_per_minute float8, p_budget float8)
RETURNS TABLE (usd float8, took boolean, tokens float8) LANGUAGE sql VOLATILE AS $fn$
WITH spent AS (
  SELECT coalesce(sum(s.usd), 0)::float8 AS usd FROM client_spend s WHERE s.client = p_client AND s.day >= p_from
), bucket AS (
  INSERT INTO client_rate AS r (client, tokens, at)
  SELECT p_client, p_per_minute - 1, p_now FROM spent WHERE p_per_minute IS NOT NULL AND (p_budget IS NULL OR spent.usd < p_budget)
  ON CONFLICT (client) DO UPDATE SET
    took = least(p_per_minute, r.tokens + greatest(0, p_now - r.at) * p_per_minute / 60000) >= 1,
    tokens = least(p_per_minute, r.tokens + greatest(0, p_now - r.at) * p_per_minute / 60000)
      - CASE WHEN least(p_per_minute, r.tokens + greatest(0, p_now - r.at) * p_per_minute / 60000) >= 1 THEN 1 ELSE 0 END,
    at = greatest(r.at, p_now)
  RETURNING r.took, r.tokens
)
SELECT spent.usd, bucket.took, bucket.tokens FROM spent LEFT JOIN bucket ON true
$fn$;

-- The claim as before, and after the lock a wait for the commit of a previous holder that gave it
-- back inside its last batch (append_events); the catch-up read then takes its snapshot after it.
CREATE OR REPLACE FUNCTION claim_session(p_id text, p_after bigint) RETURNS TABLE (seq bigint, off bigint, line text)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  PERFORM pg_advisory_lock(hashtextextended(p_id, 0));
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(p_id, 1));
  RETURN QUERY SELECT e.seq, e.off, e.line FROM events e WHERE e.session_id = p_id AND e.seq > p_after ORDER BY e.seq;
END
$fn$;

-- A limited key's admission and the claim in one call: the admission's answer on a first row (seq
-- NULL); refused, the session is not locked and nothing else is returned.
CREATE FUNCTION claim_session_admitting(p_id text, p_after bigint, p_client text, p_from date, p_now bigint, p_per_minute float8, p_budget float8)
RETURNS TABLE (seq bigint, off bigint, line text, a_usd float8, a_took boolean, a_tokens float8)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v record;
BEGIN
  SELECT * INTO v FROM client_admit(p_client, p_from, p_now, p_per_minute, p_budget);
  RETURN QUERY SELECT NULL::bigint, NULL::bigint, NULL::text, v.usd, v.took, v.tokens;
  IF (p_budget IS NOT NULL AND v.usd >= p_budget) OR v.took IS FALSE THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT c.seq, c.off, c.line, NULL::float8, NULL::boolean, NULL::float8 FROM claim_session(p_id, p_after) c;
END
$fn$;
`,
  },
  {
    version: 7,
    name: 'a removed session refused at its claim',
    sql: `
-- A claim of a session whose row is gone (\`proxy sessions prune\` removed it while a replica held
-- it live, docs/decisions/0024) gives the lock back and is refused with P0002 (no_data_found): the
-- replica drops its copy and starts the conversation afresh, where its next append would have met
-- the foreign key. A primary-key lookup inside the same call: no round trip more.
CREATE OR REPLACE FUNCTION claim_session(p_id text, p_after bigint) RETURNS TABLE (seq bigint, off bigint, line text)
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  PERFORM pg_advisory_lock(hashtextextended(p_id, 0));
  PERFORM pg_advisory_xact_lock_shared(hashtextextended(p_id, 1));
  IF NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = p_id) THEN
    PERFORM pg_advisory_unlock(hashtextextended(p_id, 0));
    RAISE EXCEPTION 'session % was removed', p_id USING ERRCODE = 'no_data_found';
  END IF;
  RETURN QUERY SELECT e.seq, e.off, e.line FROM events e WHERE e.session_id = p_id AND e.seq > p_after ORDER BY e.seq;
END
$fn$;
`,
  },
  {
    version: 8,
    name: 'sessions located by a retry',
    sql: `
-- A replica asked a client's retry of a request another replica answered finds the session by the
-- entry's retryTip (the request without its reply), as it finds any by its tip
-- (docs/decisions/0025-idempotency-keys-in-the-log.md).
CREATE INDEX sessions_retry_tip ON sessions ((entry->>'retryTip'));
`,
  },
  {
    version: 9,
    name: 'when an image was last written or confirmed',
    sql: `
-- An image no log names goes once no replica has written or confirmed it for the prune's time:
-- a replica confirms an image it names without writing it at least hourly (src/proxy/images.ts,
-- docs/decisions/0026-images-no-log-names-removed.md). The rows there are counted from now.
ALTER TABLE blobs ADD COLUMN touched_at timestamptz NOT NULL DEFAULT now();
`,
  },
];
