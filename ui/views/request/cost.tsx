/**
 * What a request cost and why: its prompt split into what was read from the cache, written to it
 * and sent uncached, its output, its cost against the same tokens uncached, and how much of the
 * previous request's prompt the cache kept. The session page's row for the request, in words.
 */
import type { RequestDetail, RequestFigures } from '../../contract.js';
import { int, ms, pct, usd } from '../../format.js';
import { Figure, Figures } from '../../parts/figure.js';

export function Cost({ f, failure }: { f: RequestFigures; failure: RequestDetail['failure'] }) {
  const share = f.prompt_tokens === null || f.cached_tokens === null || f.prompt_tokens === 0 ? null : f.cached_tokens / f.prompt_tokens;
  return (
    <>
      {f.status !== 'ok' && (
        <p class={`status ${f.status === 'error' ? 'error' : ''}`} data-testid="request-status" data-value={f.status}>
          {f.status === 'error' ? failed(failure) : f.status === 'aborted' ? 'The client left before the reply ended.' : 'No reply is logged yet.'}
        </p>
      )}
      <Figures label="What it cost">
        <Figure label="Prompt tokens" testid="request-prompt-tokens" value={f.prompt_tokens} text={int(f.prompt_tokens)} note={`~${int(f.est_tokens)} estimated`} />
        <Figure label="Read from cache" testid="request-cached-tokens" value={f.cached_tokens} text={int(f.cached_tokens)} note={share === null ? undefined : `${pct(share)} of the prompt`} />
        <Figure label="Written to cache" testid="request-written-tokens" value={f.cache_write_tokens} text={int(f.cache_write_tokens)} />
        <Figure label="Uncached input" testid="request-uncached-tokens" value={f.uncached_tokens} text={int(f.uncached_tokens)} />
        <Figure label="Output" testid="request-output-tokens" value={f.completion_tokens} text={int(f.completion_tokens)}
          note={f.reasoning_tokens !== null && f.reasoning_tokens > 0 ? `${int(f.reasoning_tokens)} reasoning` : undefined} />
        <Figure label="Cost" testid="request-cost" value={f.cost_usd} text={usd(f.cost_usd)} note={f.cost_source === 'provider' ? 'as the provider reported it' : f.cost_source === 'prices' ? "at the route's prices" : undefined} />
        <Figure label="Saved by the cache" testid="request-savings" value={f.savings_usd} text={usd(f.savings_usd)}
          note={f.uncached_cost_usd === null ? undefined : `of ${usd(f.uncached_cost_usd)} uncached`} />
        <Figure label="Reuse of the previous prompt" testid="request-reuse" value={f.reuse} text={pct(f.reuse)} />
        <Figure label="First byte" testid="request-ttfb" value={f.ttfb_ms} text={ms(f.ttfb_ms)} note={f.total_ms === null ? undefined : `${ms(f.total_ms)} in all`} />
      </Figures>
    </>
  );
}

/** A failed call in words: the upstream's status and its own message, or the transport's error, and the tries. */
function failed(failure: RequestDetail['failure']): string {
  if (failure === null) return 'The upstream call failed.';
  const what = failure.status !== null ? `the upstream answered ${failure.status}` : `the upstream was not reached${failure.error === null ? '' : ` (${failure.error})`}`;
  const tries = failure.attempts !== null && failure.attempts > 1 ? ` after ${failure.attempts} attempts` : '';
  return `The call failed: ${what}${tries}.${failure.message === null ? '' : ` It said: ${failure.message}`}`;
}
