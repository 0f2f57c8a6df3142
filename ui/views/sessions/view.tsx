/** Sessions: one row each, sorted by a header, filtered by model, key, id text and period, a page at a time. */
import { useState } from 'preact/hooks';
import { PERIODS, type Page, type SessionItem, type SessionsPage, type SortKey } from '../../contract.js';
import { cause, int, passed, pct, shortId, time, usd } from '../../format.js';
import { href } from '../../router.js';
import { LiveBadge, useDebounced, useLive } from '../../parts/live.js';
import { Status, useLoad } from '../../parts/load.js';
import { Pager, SortHeader, Th, type Dir } from '../../parts/table-parts.js';
import { CAUSES, loadSessions, PAGE_SIZE, readQuery, writeQuery, type SessionsQuery } from './data.js';

export function SessionsPage({ query }: { query: URLSearchParams }) {
  const q = readQuery(query);
  const loaded = useLoad((signal) => loadSessions(q, signal), [JSON.stringify(q)]);
  const live = useLive(undefined, useDebounced(loaded.reload, 500));
  const go = (change: Partial<SessionsQuery>) => {
    location.hash = href.sessions(writeQuery({ ...q, offset: 0, ...change }));
  };
  return (
    <>
      <div class="title-row">
        <h1>Sessions</h1>
        <LiveBadge {...live} />
      </div>
      <Filters key={`${q.model}\n${q.key}\n${q.q}`} q={q} onApply={go} />
      <Status loaded={loaded} what="the sessions">
        {loaded.data !== undefined && <><Unreadable list={loaded.data.unreadable} /><SessionsTable page={loaded.data} q={q} go={go} /></>}
      </Status>
    </>
  );
}

function Filters({ q, onApply }: { q: SessionsQuery; onApply: (change: Partial<SessionsQuery>) => void }) {
  const [draft, setDraft] = useState({ model: q.model, key: q.key, q: q.q });
  const field = (name: 'model' | 'key' | 'q', label: string) => (
    <label>
      {label}
      <input type="search" name={name} data-testid={`filter-${name}`} value={draft[name]}
        onInput={(e) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value })} />
    </label>
  );
  return (
    <form class="filters" role="search" aria-label="Filter sessions" onSubmit={(e) => { e.preventDefault(); onApply(draft); }}>
      {field('q', 'Session id contains')}
      {field('model', 'Model')}
      {field('key', 'Client key')}
      <label>
        Break cause
        <select data-testid="filter-cause" value={q.cause} onChange={(e) => onApply({ ...draft, cause: (e.currentTarget as HTMLSelectElement).value })}>
          <option value="">any</option>
          {CAUSES.map((c) => <option value={c}>{cause(c)}</option>)}
        </select>
      </label>
      <label>
        Period
        <select data-testid="filter-period" value={q.period} onChange={(e) => onApply({ ...draft, period: (e.currentTarget as HTMLSelectElement).value as SessionsQuery['period'] })}>
          {PERIODS.map((p) => <option value={p}>{p === 'all' ? 'all' : `last ${p}`}</option>)}
        </select>
      </label>
      <button type="submit" data-testid="filter-apply">Filter</button>
    </form>
  );
}

/** The sessions whose log cannot be read: named, as `proxy sessions` names them, not left to vanish. */
function Unreadable({ list }: { list: SessionsPage['unreadable'] }) {
  if (list.total === 0) return null;
  return (
    <section class="status error" role="status" aria-labelledby="unreadable-h" data-testid="unreadable" data-total={list.total}>
      <h2 id="unreadable-h">{int(list.total)} session{list.total === 1 ? "'s log cannot" : "s' logs cannot"} be read</h2>
      <p>{list.total === 1 ? 'It is' : 'They are'} not in this list or in any figure of the inspector. <code>proxy replay SESSION</code> names the damaged line; the proxy does not continue such a session.</p>
      <ul>
        {list.items.map((u) => <li data-testid="unreadable-session" data-id={u.id}><a href={href.session(u.id)}><code>{u.id}</code></a>: {u.error}</li>)}
        {list.total > list.items.length && <li class="muted">and {int(list.total - list.items.length)} more</li>}
      </ul>
    </section>
  );
}

function SessionsTable({ page, q, go }: { page: Page<SessionItem>; q: SessionsQuery; go: (change: Partial<SessionsQuery>) => void }) {
  const sort = (field: SortKey, dir: Dir) => go({ sort: field, dir });
  const header = (label: string, field: SortKey) => <SortHeader label={label} field={field} sort={q.sort} dir={q.dir} onSort={sort} numeric={field !== 'last_active'} />;
  return (
    <>
      <div class="scroll">
        <table data-testid="sessions" data-total={page.total}>
          <caption class="sr-only">Sessions, sorted by {q.sort.replace('_', ' ')} {q.dir === 'asc' ? 'ascending' : 'descending'}</caption>
          <thead>
            <tr>
              <Th>Session</Th><Th>Client</Th><Th>Model</Th>
              {header('Requests', 'requests')}
              {header('Prompt tokens', 'prompt_tokens')}
              {header('Read from cache', 'cache_share')}
              {header('Cost', 'cost')}
              {header('Saved', 'savings')}
              {header('Last active', 'last_active')}
            </tr>
          </thead>
          <tbody>
            {page.items.length === 0 && <tr><td colSpan={9} class="muted">No sessions match.</td></tr>}
            {page.items.map((s) => (
              <tr data-testid="session-row" data-id={s.id}>
                <th scope="row">
                  <a href={href.session(s.id)} title={s.id} data-testid="session-link"><code>{shortId(s.id)}</code></a>
                  {s.side !== null && <span class="tag">{s.side}</span>}
                  {s.parent !== null && s.side === null && <span class="tag">fork</span>}
                  {passed(s.continued_until) && <span class="tag" data-testid="not-continued" title={`Idle past [sessions] locate_days (since ${time(s.continued_until)}): a request that continues this conversation starts a new session.`}>not continued</span>}
                </th>
                <td class="nowrap" data-testid="client">{s.client ?? '–'}</td>
                <td data-testid="model">{s.route ?? s.model ?? '–'}</td>
                <td class="num" data-testid="requests" data-value={s.requests}>{int(s.requests)}</td>
                <td class="num" data-testid="prompt-tokens" data-value={String(s.prompt_tokens)}>{int(s.prompt_tokens)}</td>
                <td class="num" data-testid="cache-share" data-value={String(s.cache_share)}>{pct(s.cache_share)}</td>
                <td class="num" data-testid="cost" data-value={String(s.cost_usd)}>{usd(s.cost_usd)}</td>
                <td class="num" data-testid="savings" data-value={String(s.savings_usd)}>{usd(s.savings_usd)}</td>
                <td class="nowrap" data-testid="last-active" data-value={s.last_active ?? 'null'}>{time(s.last_active)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager offset={page.offset} limit={page.limit > 0 ? page.limit : PAGE_SIZE} total={page.total} label="Sessions pages" onPage={(offset) => go({ offset })} />
    </>
  );
}
