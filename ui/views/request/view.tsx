/**
 * A request: its digest (logged against rebuilt), the hints added, the reasoning given back, the
 * messages as they went upstream (redacted, rebuilt from the log), and the first difference from
 * the session's previous request, highlighted where it is, with its cause.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { FirstDifference, RequestDetail, UpstreamMessage } from '../../contract.js';
import { cause } from '../../format.js';
import { href } from '../../router.js';
import { Status, useLoad } from '../../parts/load.js';
import { asText, diffIndex, loadRequest, spans } from './data.js';
import { Cost } from './cost.js';
import { Hints } from './hints.js';

export function RequestPage({ id, seq }: { id: string; seq: number }) {
  const loaded = useLoad((signal) => loadRequest(id, seq, signal), [id, seq]);
  return (
    <>
      <nav aria-label="Breadcrumb" class="crumbs">
        <a href={href.sessions()}>Sessions</a> <span aria-hidden="true">›</span>{' '}
        <a href={href.session(id)} data-testid="session-link">session <code>{id}</code></a> <span aria-hidden="true">›</span>{' '}
        <span aria-current="page">request</span>
      </nav>
      <h1>Request <span data-testid="request-seq">seq {seq}</span></h1>
      <Status loaded={loaded} what="the request">{loaded.data !== undefined && <RequestBody r={{ ...loaded.data, sessionId: id }} />}</Status>
    </>
  );
}

function RequestBody({ r }: { r: RequestDetail & { sessionId: string } }) {
  const at = diffIndex(r.diff);
  return (
    <>
      {r.previous !== undefined && r.previous !== null && (
        <p class="muted">The previous request: <a href={href.request(r.sessionId, r.previous)} data-testid="previous-link">seq {r.previous}</a>{r.cause !== undefined && <>; the prefix {r.cause === 'none' ? 'extends it' : <>changed: <span class={`cause c-${r.cause}`}>{cause(r.cause)}</span></>}</>}.</p>
      )}
      <dl class="facts">
        <div><dt>Route</dt><dd>{r.route}</dd></div>
        <div><dt>Model</dt><dd>{r.model}</dd></div>
        <div><dt>Wire</dt><dd>{r.wire}</dd></div>
      </dl>
      <section aria-labelledby="cost-h">
        <h2 id="cost-h">What it cost</h2>
        <Cost f={r.figures} failure={r.failure} />
      </section>
      <section aria-labelledby="digest-h">
        <h2 id="digest-h">Digest</h2>
        <p>
          <span data-testid="digest-verified" data-value={String(r.digest.verified)} class={`badge ${r.digest.verified ? 'ok' : 'bad'}`}>
            {r.digest.verified ? '✓ verified: rebuilt as logged' : '✗ the rebuilt request does not match the log'}
          </span>
        </p>
        <dl class="digests">
          <div><dt>Logged</dt><dd><code data-testid="digest-logged">{r.digest.logged ?? 'none'}</code></dd></div>
          <div><dt>Rebuilt</dt><dd><code data-testid="digest-rebuilt">{r.digest.rebuilt ?? 'none'}</code></dd></div>
        </dl>
        {r.digest.problem !== undefined && <p class="status error" data-testid="digest-problem">{r.digest.problem}</p>}
      </section>
      <section aria-labelledby="diff-h">
        <h2 id="diff-h">First difference from the previous request</h2>
        <Difference diff={r.diff} />
      </section>
      <div class="columns">
        <section aria-labelledby="hints-h">
          <h2 id="hints-h">Cache hints added</h2>
          <Hints hints={r.hints} />
        </section>
        <section aria-labelledby="reasoning-h">
          <h2 id="reasoning-h">Reasoning given back</h2>
          {r.reasoning_back.length === 0 ? <p class="muted">None.</p> : (
            <ul data-testid="reasoning-back">
            {r.reasoning_back.map((x) => (
              <li data-index={x.index}>
                message {x.index}: {x.thinking_chars.toLocaleString('en-US')} characters of thinking
                {x.blocks.length > 0 && <>; {x.blocks.map((b) => `${b.kind} (${b.origin})`).join(', ')}</>}
              </li>
            ))}
          </ul>
          )}
          {r.dropped_blocks !== null && r.dropped_blocks > 0 && (
            <p data-testid="reasoning-dropped" data-value={r.dropped_blocks}>
              <span class="badge warn">The upstream dropped {r.dropped_blocks.toLocaleString('en-US')} of these blocks.</span>{' '}
              They were bound to a prefix that changed after the model wrote them (a trim, a summary or another system prompt), so the model did not read them; the reply says so.
            </p>
          )}
        </section>
      </div>
      <section aria-labelledby="upstream-h">
        <h2 id="upstream-h">Sent upstream (rebuilt from the log, redacted)</h2>
        <Messages messages={r.upstream.messages} at={at} />
        {r.upstream.params !== undefined && Object.keys(r.upstream.params).length > 0 && (
          <details><summary>Parameters</summary><pre data-testid="params">{asText(r.upstream.params)}</pre></details>
        )}
        {r.upstream.tools !== undefined && r.upstream.tools.length > 0 && (
          <details><summary>Tools ({r.upstream.tools.length})</summary><pre>{asText(r.upstream.tools)}</pre></details>
        )}
      </section>
    </>
  );
}

function Difference({ diff }: { diff: FirstDifference | null }) {
  if (diff === null) return <p class="muted" data-testid="diff-none">None: this is the session's first request, or it only extends the previous one.</p>;
  const s = spans(diff.before, diff.after);
  const context = typeof diff.context === 'string' ? diff.context : undefined;
  const line = typeof diff.context === 'object' && diff.context !== null ? diff.context.line : undefined;
  return (
    <div class="diff" data-testid="diff" data-path={diff.path} data-cause={diff.cause}>
      <p>
        At <code data-testid="diff-path">{diff.path}</code>{line !== undefined && <>, line {line}</>}; cause: <span class={`cause c-${diff.cause}`} data-testid="diff-cause">{cause(diff.cause)}</span>
      </p>
      {context !== undefined && context !== '' && <pre class="context" data-testid="diff-context">{context}</pre>}
      {diff.truncated === true && <p class="muted">The values are long: the server sent their first 200,000 characters.</p>}
      <div class="sides">
        <figure>
          <figcaption>Previous request</figcaption>
          {diff.before === null ? <None path={diff.path} testId="diff-before" /> : <pre>{s.headCut && '…'}{s.head}<del data-testid="diff-before">{s.before}</del>{s.tail}{s.tailCut && '…'}</pre>}
        </figure>
        <figure>
          <figcaption>This request</figcaption>
          {diff.after === null ? <None path={diff.path} testId="diff-after" /> : <pre>{s.headCut && '…'}{s.head}<ins data-testid="diff-after">{s.after}</ins>{s.tail}{s.tailCut && '…'}</pre>}
        </figure>
      </div>
    </div>
  );
}

/**
 * A side with no value (the server sends null): a message's content that held no text (an
 * assistant message with only tool calls), or a field or message the request did not have.
 */
function None({ path, testId }: { path: string; testId: string }) {
  const key = /^messages\[\d+\]\.(.+)$/.exec(path)?.[1];
  const text = key === undefined ? 'No message here.' : key === 'content' ? 'No text: this message held none.' : `No ${key} in this message.`;
  return <pre class="muted" data-testid={testId} data-none="true">{text}</pre>;
}

/** Messages open around the difference and at the end; the rest folded, one click (or Enter) away. */
function Messages({ messages, at }: { messages: UpstreamMessage[]; at: number | undefined }) {
  const marked = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    marked.current?.scrollIntoView({ block: 'nearest' });
  }, [at]);
  return (
    <ol class="messages" data-testid="messages" data-count={messages.length}>
      {messages.map((m, i) => {
        const differs = i === at;
        const open = differs || i >= messages.length - 2 || (at !== undefined && Math.abs(i - at) <= 1);
        const text = contentText(m);
        return (
          <li data-testid={differs ? 'diff-message' : 'message'} data-index={i} data-role={m.role} class={differs ? 'differs' : undefined}>
            <details open={open} ref={differs ? marked : undefined}>
              <summary><span class={`role r-${m.role}`}>{m.role}</span> message {i}{differs && <strong> · first difference</strong>} <span class="muted">({text.length.toLocaleString('en-US')} characters)</span></summary>
              <pre>{text}</pre>
            </details>
          </li>
        );
      })}
    </ol>
  );
}

function contentText(m: UpstreamMessage): string {
  const parts: string[] = [];
  if (typeof m.content === 'string') parts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content as Record<string, unknown>[]) parts.push(typeof part.text === 'string' ? part.text : asText(part));
  } else if (m.content !== undefined && m.content !== null) parts.push(asText(m.content));
  for (const [k, v] of Object.entries(m)) if (k !== 'role' && k !== 'content' && v !== undefined && v !== null) parts.push(`${k}: ${asText(v)}`);
  return parts.join('\n');
}
