/** A session: its lineage, totals, the token bars with breaks and timeline marks, running cost, and its requests. */
import { useMemo, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import type { RequestRow, SessionDetail } from '../../contract.js';
import { cause, int, isBreak, ms, passed, pct, shortId, time, usd } from '../../format.js';
import { href } from '../../router.js';
import { LiveBadge, useDebounced, useLive } from '../../parts/live.js';
import { Status, useLoad } from '../../parts/load.js';
import { Pager, Th } from '../../parts/table-parts.js';
import { barScale, REQUEST_AXIS, UPlotChart, VALUE_AXIS_SIZE } from '../../parts/uplot-chart.js';
import { TotalsFigures } from '../overview/view.js';
import { breaks as breaksOf, cumulative, describe, loadSession, timelineMarks, uncachedOf, withLive } from './data.js';
import { TokenChart } from './token-chart.js';

const ROWS_PER_PAGE = 100;

export function SessionPage({ id }: { id: string }) {
  const loaded = useLoad((signal) => loadSession(id, signal), [id]);
  // Requests the live stream announced since the last read: shown at once, then the quiet re-read replaces them.
  const [live, setLive] = useState<{ base: SessionDetail | undefined; view: SessionDetail | undefined }>({ base: undefined, view: undefined });
  const reread = useDebounced(loaded.reload, 400);
  const stream = useLive(id, (r) => {
    if (r.session !== id) return;
    setLive((s) => {
      const base = loaded.data;
      const start = s.base === base && s.view !== undefined ? s.view : base;
      return start === undefined ? s : { base, view: withLive(start, r) };
    });
    reread();
  });
  const session = live.base === loaded.data && live.view !== undefined ? live.view : loaded.data;
  return (
    <>
      <nav aria-label="Breadcrumb" class="crumbs"><a href={href.sessions()}>Sessions</a> <span aria-hidden="true">›</span> <span aria-current="page">session</span></nav>
      <div class="title-row">
        <h1>Session <code data-testid="session-id" title={id}>{id}</code></h1>
        <LiveBadge {...stream} />
      </div>
      <Status loaded={loaded} what="the session">{session !== undefined && <SessionBody session={session} />}</Status>
    </>
  );
}

function SessionBody({ session }: { session: SessionDetail }) {
  const rows = session.requests;
  const breaks = useMemo(() => breaksOf(rows), [rows]);
  const marks = useMemo(() => timelineMarks(rows, session.timeline), [rows, session.timeline]);
  return (
    <>
      <Lineage session={session} />
      <TotalsFigures totals={{ ...session.totals, requests: Math.max(session.totals.requests, rows.length) }} prefix="session" />
      <section aria-labelledby="tokens-h">
        <h2 id="tokens-h">Tokens per request</h2>
        {rows.length === 0 ? <p class="muted">No requests yet.</p> : <TokenChart session={session.id} rows={rows} breaks={breaks} marks={marks} />}
      </section>
      <div class="columns">
        <section aria-labelledby="breaks-h">
          <h2 id="breaks-h">Breaks <span class="count" data-testid="break-count">{breaks.length}</span></h2>
          {breaks.length === 0 ? <p class="muted">The cached prefix never broke.</p> : (
            <ol class="marks" data-testid="breaks">
              {breaks.map((b) => (
                <li data-testid="break" data-seq={b.seq} data-cause={b.kind}>
                  <a href={href.request(session.id, b.seq)}>request {b.index + 1} (seq {b.seq})</a>: <span class={`cause c-${b.kind}`}>{cause(b.kind)}</span>
                  <Dropped count={rows[b.index]?.dropped_blocks ?? null} />
                </li>
              ))}
            </ol>
          )}
        </section>
        <section aria-labelledby="timeline-h">
          <h2 id="timeline-h">Window timeline <span class="count" data-testid="timeline-count">{session.timeline.length}</span></h2>
          {session.timeline.length === 0 ? <p class="muted">No elisions, folds, caps, summaries or rewrites.</p> : (
            <ol class="marks" data-testid="timeline">
              {session.timeline.map((m) => (
                <li data-testid="timeline-mark" data-seq={m.seq} data-kind={m.kind}><span class={`kind k-${m.kind}`}>{m.kind}</span> at seq {m.seq}: {describe(m).replace(/^[a-z]+:? ?/, '') || '–'}</li>
              ))}
            </ol>
          )}
        </section>
      </div>
      <section aria-labelledby="running-h">
        <h2 id="running-h">Cost and savings so far</h2>
        <Running rows={rows} />
      </section>
      <section aria-labelledby="requests-h">
        <h2 id="requests-h">Requests</h2>
        <RequestsTable session={session.id} rows={rows} />
      </section>
    </>
  );
}

function Lineage({ session }: { session: SessionDetail }) {
  const facts: [string, string | null][] = [['Client', session.client], ['Route', session.route], ['Model', session.model], ['Key', session.key]];
  return (
    <div class="lineage">
      <dl class="facts">
        {facts.map(([k, v]) => <div><dt>{k}</dt><dd data-testid={`session-${k.toLowerCase()}`}>{v ?? '–'}</dd></div>)}
      </dl>
      {passed(session.continued_until) && (
        <p data-testid="not-continued">
          Not continued: idle past <code>[sessions] locate_days</code> since {time(session.continued_until)}, so a request that
          continues this conversation starts a new session. This log stays until <code>proxy sessions prune</code> removes it.
        </p>
      )}
      {session.parent !== null && (
        <p data-testid="parent">
          {session.side !== null ? `A ${session.side} side request of ` : 'Forked from '}
          <a href={href.session(session.parent.session)} data-testid="parent-link" title={session.parent.session}><code>{shortId(session.parent.session)}</code></a>
          {' '}at <a href={href.request(session.parent.session, session.parent.seq)}>seq {session.parent.seq}</a>
        </p>
      )}
      {session.children.length > 0 && (
        <div>
          <h2 class="inline">Forks and side requests</h2>
          <ul class="children" data-testid="children">
            {session.children.map((c) => (
              <li data-testid="child" data-kind={c.kind} data-id={c.id}>
                <span class="tag">{c.kind}</span> at seq {c.seq}: <a href={href.session(c.id)} title={c.id}><code>{shortId(c.id)}</code></a>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

function Running({ rows }: { rows: readonly RequestRow[] }) {
  const data = useMemo(() => cumulative(rows), [rows]);
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => ({
    cursor: { drag: { x: true, y: false } },
    // The token chart's x scale and axis width: request N sits under its bar.
    scales: { x: barScale(false) },
    axes: [REQUEST_AXIS, { stroke: '#444', size: VALUE_AXIS_SIZE, values: (_u, vals) => vals.map((v) => usd(v)) }],
    series: [
      { label: 'request' },
      { label: 'Cost', stroke: '#2f6db5', width: 2, value: (_u, v) => (v === null ? '–' : usd(v)) },
      { label: 'Saved by the cache', stroke: '#2e7d4f', width: 2, value: (_u, v) => (v === null ? '–' : usd(v)) },
    ],
  }), []);
  const last = rows.at(-1);
  return (
    <>
      <p data-testid="running">
        After {int(rows.length)} requests: cost <strong data-testid="cumulative-cost" data-value={String(last?.cumulative_cost_usd ?? null)}>{usd(last?.cumulative_cost_usd)}</strong>,
        saved <strong data-testid="cumulative-savings" data-value={String(last?.cumulative_savings_usd ?? null)}>{usd(last?.cumulative_savings_usd)}</strong>.
      </p>
      {rows.length > 0 && <UPlotChart options={options} data={data} height={180} testid="running-chart" label="Cumulative cost and savings by request" />}
    </>
  );
}

function RequestsTable({ session, rows }: { session: string; rows: readonly RequestRow[] }) {
  const [offset, setOffset] = useState(0);
  const page = rows.slice(offset, offset + ROWS_PER_PAGE);
  return (
    <>
      <div class="scroll">
        <table data-testid="requests" class="dense">
          <thead>
            <tr>
              <Th numeric>#</Th><Th>Seq</Th><Th>Time</Th><Th>Route</Th><Th>Cause</Th><Th>Status</Th>
              <Th numeric>Prompt</Th><Th numeric>Cached</Th><Th numeric>Written</Th><Th numeric>Uncached</Th><Th numeric>Output</Th>
              <Th numeric>Reuse</Th><Th numeric>Cost</Th><Th numeric>Cost so far</Th><Th numeric>Saved so far</Th><Th numeric>First byte</Th>
            </tr>
          </thead>
          <tbody>
            {page.map((r, i) => (
              <tr data-testid="request-row" data-seq={r.seq} class={isBreak(r.cause) ? 'break' : undefined}>
                <td class="num">{offset + i + 1}</td>
                <th scope="row" class="nowrap"><a href={href.request(session, r.seq)} data-testid="request-link">seq {r.seq}</a></th>
                <td class="nowrap">{time(r.ts)}</td>
                <td>{r.route}</td>
                <td data-testid="cause" data-value={r.cause ?? 'null'}>{r.cause === null ? '–' : <span class={`cause c-${r.cause}`}>{cause(r.cause)}</span>}</td>
                <td data-testid="status" title={r.error_message ?? undefined}>{r.status}{r.error !== null ? `: ${r.error}` : ''}<Dropped count={r.dropped_blocks} /></td>
                <Num testid="prompt-tokens" value={r.prompt_tokens} />
                <Num testid="cached-tokens" value={r.cached_tokens} />
                <Num testid="cache-write-tokens" value={r.cache_write_tokens} />
                <Num testid="uncached-tokens" value={uncachedOf(r)} />
                <Num testid="completion-tokens" value={r.completion_tokens} />
                <td class="num" data-testid="reuse" data-value={String(r.reuse)}>{pct(r.reuse)}</td>
                <td class="num" data-testid="cost" data-value={String(r.cost_usd)} title={storageNote(r)}>{usd(r.cost_usd)}{r.storage_token_hours === null ? '' : ' *'}</td>
                <td class="num" data-testid="cumulative-cost" data-value={String(r.cumulative_cost_usd)}>{usd(r.cumulative_cost_usd)}</td>
                <td class="num" data-testid="cumulative-savings" data-value={String(r.cumulative_savings_usd)}>{usd(r.cumulative_savings_usd)}</td>
                <td class="num">{ms(r.ttfb_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.length > ROWS_PER_PAGE && <Pager offset={offset} limit={ROWS_PER_PAGE} total={rows.length} label="Request pages" onPage={setOffset} />}
    </>
  );
}

/**
 * Signed thinking blocks the upstream dropped from this request: bound to a prefix that changed
 * (a trim, a summary, another system prompt), the model did not read them (docs/decisions/0009).
 */
function Dropped({ count }: { count: number | null }) {
  if (count === null || count === 0) return null;
  const what = `${int(count)} thinking block${count === 1 ? '' : 's'} dropped`;
  return <> <span class="badge warn" data-testid="dropped-blocks" data-value={count} title="The upstream dropped these signed thinking blocks: they were bound to a prefix that has changed since, so the model did not read them.">{what}</span></>;
}

function Num({ testid, value }: { testid: string; value: number | null }) {
  return <td class="num" data-testid={testid} data-value={String(value)}>{int(value)}</td>;
}

/** A request that made an explicit context cache: its cost includes the entry's storage (src/stats/cache-storage.ts). */
function storageNote(r: RequestRow): string | undefined {
  if (r.storage_token_hours === null) return undefined;
  const held = `${r.storage_token_hours.toFixed(1)} token-hours`;
  return r.storage_usd === null ? `* made a context cache held ${held}; its storage has no price, so this cost is unknown` : `* includes ${usd(r.storage_usd)} for the context cache it made, held ${held}`;
}
