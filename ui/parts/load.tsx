/** Loading a view's data: the last answer, the error if any, and a quiet reload for live updates. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Load again without clearing what is shown (a live update). */
  reload(): void;
}

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const current = useRef<AbortController | undefined>(undefined);
  useEffect(() => {
    const ctl = new AbortController();
    current.current?.abort();
    current.current = ctl;
    setState((s) => ({ ...s, loading: true }));
    load(ctl.signal).then(
      (data) => { if (!ctl.signal.aborted) setState({ data, loading: false }); },
      (error: unknown) => {
        if (!ctl.signal.aborted) setState((s) => ({ data: s.data, error: error instanceof Error ? error : new Error(String(error)), loading: false }));
      },
    );
    return () => ctl.abort();
    // The caller names what the load depends on.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** What to show while a view has nothing yet, or when its read failed. */
export function Status({ loaded, what, children }: { loaded: Loaded<unknown>; what: string; children?: ComponentChildren }) {
  if (loaded.error !== undefined) {
    const denied = loaded.error instanceof ApiError && (loaded.error.status === 401 || loaded.error.status === 403);
    return (
      <p class="status error" role="alert" data-testid="error">
        {denied ? `Not allowed to read ${what}: sign in with an admin key (${loaded.error.message}). ` : `Could not load ${what}: ${loaded.error.message}. `}
        <button type="button" onClick={loaded.reload}>Try again</button>
      </p>
    );
  }
  if (loaded.data === undefined) return <p class="status" role="status">Loading {what}…</p>;
  return <>{children}</>;
}
