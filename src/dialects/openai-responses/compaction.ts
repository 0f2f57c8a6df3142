/**
 * Compaction on the Responses wire, answered by the proxy
 * (docs/decisions/0033-compaction-triggers-answered-by-the-proxy.md). A request whose input ends
 * with a `compaction_trigger` item asks for its conversation compacted. This is Codex's remote
 * compaction, sent by its built-in `openai` provider (codex-rs/core/src/compact_remote_v2.rs). The API
 * answers with one `compaction` item whose `encrypted_content` only it can read, and the client
 * puts that item in place of the history it summarises.
 *
 * The API's standalone endpoint, `POST /v1/responses/compact` (the SDK's `responses.compact`), is
 * the same ask: its input with the trigger appended, answered whole with the request's user
 * messages before the item, as the API lists them.
 *
 * The proxy serves any upstream, so it makes the item itself. The trigger becomes the proxy's own
 * compaction prompt (src/core/compaction-prompt.ts), asked of the route's model with no tool to call.
 * The model's summary comes back as the item's content: the summary's text, encoded, under a
 * prefix that marks it as the proxy's. When an item like that comes back in a later request, it
 * becomes a user message holding the summary. A compaction item made by another server (OpenAI's
 * own) cannot be read here, and is refused.
 */
import { ProxyError } from '../../core/errors.js';
import type { NeutralReply, Usage } from '../../core/types.js';
import type { StreamDelta } from '../types.js';
import { clientResponse, renderUsage, type EventRenderer, type ResponseMeta } from './client-render.js';
import type { InputItem } from './inbound-parse.js';
import { ResponsesEventSequence, type ResponsesSseEvent } from './stream-events.js';

/** The API's standalone compaction endpoint (openai-node `responses.compact`). */
export const COMPACT_PATH = '/v1/responses/compact';

/** What marks a compaction item's content as the proxy's: the summary follows, base64url. */
const CONTENT_PREFIX = 'prefix-proxy.compaction.v1.';

/** What a compaction item becomes in a later request: this line, a blank line, then the summary. */
export const COMPACTED_HEADER = 'The conversation before this point was compacted. Its summary:';

export function compactionContent(summary: string): string {
  return CONTENT_PREFIX + Buffer.from(summary, 'utf8').toString('base64url');
}

/** The user message's text a compaction item the proxy made stands for; throws a 400 for any other item. */
export function compactedText(encrypted: string, param: string): string {
  if (!encrypted.startsWith(CONTENT_PREFIX)) {
    const detail = `'${param}' is a compaction item the proxy did not make: only the server that made it can read it. Send the conversation it replaced instead.`;
    throw new ProxyError('invalid_request', { detail }, { param });
  }
  return `${COMPACTED_HEADER}\n\n${Buffer.from(encrypted.slice(CONTENT_PREFIX.length), 'base64url').toString('utf8')}`;
}

function compactionItem(meta: ResponseMeta, summary: string): Record<string, unknown> {
  return { id: `cmp_${meta.id.slice('resp_'.length)}`, type: 'compaction', encrypted_content: compactionContent(summary) };
}

/**
 * A `/v1/responses/compact` body (`model`, `input`, `instructions`, `previous_response_id`, ...) as
 * the create request it stands for: its input with a `compaction_trigger` last, answered whole.
 * Anything but an object is left for the parser to refuse.
 */
export function asCompactionRequest(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const { input } = body as { input?: unknown };
  const items = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? input : [];
  return { ...body, input: [...items, { type: 'compaction_trigger' }], stream: false };
}

/** The request's user messages, as the endpoint lists them before its compaction item. */
export function keptUserItems(input: readonly InputItem[]): unknown[] {
  return input.filter((item): item is MessageItem => item.type === 'message' && item.role === 'user').map((item) => {
    const { id } = item as { id?: unknown };
    return { ...(typeof id === 'string' ? { id } : {}), type: 'message', role: 'user', content: item.content };
  });
}

type MessageItem = Extract<InputItem, { type: 'message' }>;

/** A reply with no text has nothing to install in place of the history. */
function noSummary(reply: NeutralReply): boolean {
  return reply.content === null || reply.content.trim() === '';
}

const NO_SUMMARY = 'The model answered the compaction with no summary text (a tool call or nothing); the conversation was not compacted. Try again.';

/** The whole response to a compaction request: its one item, or a failure when the model gave no text. */
export function renderCompaction(reply: NeutralReply, meta: ResponseMeta): Record<string, unknown> {
  if (noSummary(reply)) return clientResponse(meta, 'failed', [], renderUsage(reply.usage), { error: { code: 'upstream_bad_reply', message: NO_SUMMARY } });
  return clientResponse(meta, 'completed', [compactionItem(meta, reply.content!)], renderUsage(reply.usage));
}

/**
 * The endpoint's answer (openai-node `CompactedResponse`): every user message of the request, then
 * the compaction item. With no summary to give, the messages alone and the `error` saying why.
 */
export function renderCompacted(reply: NeutralReply, meta: ResponseMeta, kept: readonly unknown[]): Record<string, unknown> {
  const usage = renderUsage(reply.usage);
  const head = { id: meta.id, object: 'response.compaction', created_at: meta.createdAt };
  if (noSummary(reply)) return { ...head, output: [...kept], usage, error: { code: 'upstream_bad_reply', message: NO_SUMMARY } };
  return { ...head, output: [...kept, compactionItem(meta, reply.content!)], usage };
}

/**
 * The stream of a compaction request: the response's start, then, once the summary is whole, its
 * one item and the completed response. Nothing of the summary shows before it is whole (the API
 * sends the item alone; Codex reads only that item).
 */
export function createCompactionRenderer(meta: ResponseMeta): EventRenderer {
  const seq = new ResponsesEventSequence();
  let started = false;
  let usage: Usage | undefined;
  const preamble = (out: ResponsesSseEvent[]): void => {
    if (started) return;
    started = true;
    const start = clientResponse(meta, 'in_progress', [], null);
    out.push(seq.lifecycle('response.created', start), seq.lifecycle('response.in_progress', start));
  };
  const failed = (out: ResponsesSseEvent[], code: string, message: string, param: string | null): ResponsesSseEvent[] => {
    out.push(seq.error(code, message, param));
    out.push(seq.lifecycle('response.failed', clientResponse(meta, 'failed', [], usage === undefined ? null : renderUsage(usage), { error: { code, message } })));
    return out;
  };
  return {
    delta(d: StreamDelta) {
      const out: ResponsesSseEvent[] = [];
      preamble(out);
      if (d.type === 'usage') usage = d.usage;
      return out;
    },
    end(final) {
      const out: ResponsesSseEvent[] = [];
      preamble(out);
      usage = final.usage ?? usage;
      if (noSummary(final)) return failed(out, 'upstream_bad_reply', NO_SUMMARY, null);
      // A summary cut at the output limit is still what the model wrote: the client installs it.
      const item = compactionItem(meta, final.content!);
      out.push(seq.itemAdded(0, item), seq.itemDone(0, item));
      out.push(seq.lifecycle('response.completed', clientResponse(meta, 'completed', [item], renderUsage(usage))));
      return out;
    },
    error(err: ProxyError) {
      const out: ResponsesSseEvent[] = [];
      preamble(out);
      return failed(out, err.code, err.message, err.param);
    },
  };
}
