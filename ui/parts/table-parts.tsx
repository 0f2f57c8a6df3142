/** Table headers that sort (buttons, with aria-sort on the cell) and a pager. */
import type { ComponentChildren } from 'preact';

export type Dir = 'asc' | 'desc';

export function SortHeader<K extends string>({ label, field, sort, dir, onSort, numeric }: {
  label: string;
  field: K;
  sort: K;
  dir: Dir;
  onSort: (field: K, dir: Dir) => void;
  numeric?: boolean;
}) {
  const active = sort === field;
  const next: Dir = active && dir === 'desc' ? 'asc' : 'desc';
  return (
    <th scope="col" class={numeric === true ? 'num' : undefined} aria-sort={active ? (dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" class="sort" data-testid={`sort-${field}`} onClick={() => onSort(field, next)}>
        {label}
        <span aria-hidden="true" class="arrow">{active ? (dir === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
      </button>
    </th>
  );
}

export function Th({ children, numeric }: { children: ComponentChildren; numeric?: boolean }) {
  return <th scope="col" class={numeric === true ? 'num' : undefined}>{children}</th>;
}

export function Pager({ offset, limit, total, onPage, label }: { offset: number; limit: number; total: number; onPage: (offset: number) => void; label: string }) {
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" data-testid="page-prev" disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - limit))}>Previous</button>
      <span data-testid="page-range" aria-live="polite">{total === 0 ? 'none' : `${offset + 1}–${last} of ${total}`}</span>
      <button type="button" data-testid="page-next" disabled={last >= total} onClick={() => onPage(offset + limit)}>Next</button>
    </nav>
  );
}
