/** Follow the live stream while a view is open: each answered request, and whether it is connected. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { followLive } from '../api.js';
import type { LiveRequest } from '../contract.js';

export function useLive(session: string | undefined, onRequest: (r: LiveRequest) => void): { open: boolean; seen: number } {
  const [open, setOpen] = useState(false);
  const [seen, setSeen] = useState(0);
  const handler = useRef(onRequest);
  handler.current = onRequest;
  useEffect(() => {
    setSeen(0);
    return followLive(session, (r) => {
      setSeen((n) => n + 1);
      handler.current(r);
    }, setOpen);
  }, [session]);
  return { open, seen };
}

export function LiveBadge({ open, seen }: { open: boolean; seen: number }) {
  return (
    <p class={`live ${open ? 'on' : 'off'}`} data-testid="live" data-open={String(open)} data-seen={seen} role="status">
      <span aria-hidden="true" class="dot" />
      {open ? 'Live' : 'Not live'}
      {seen > 0 && <> · <span data-testid="live-count">{seen}</span> new {seen === 1 ? 'request' : 'requests'}</>}
    </p>
  );
}

/** Call `fn` once `wait` ms after the last of a burst of calls. */
export function useDebounced(fn: () => void, wait: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useRef(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => latest.current(), wait);
  }).current;
}
