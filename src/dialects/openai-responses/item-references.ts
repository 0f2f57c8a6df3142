/**
 * `item_reference` input items (docs/inbound.md, Responses): an item of an earlier response named
 * by its id instead of sent again. A client that lets the API store its responses sends them so:
 * the Vercel AI SDK's `openai(...)`, whose `store` is true by default, names its earlier replies'
 * text and reasoning this way from its second step on. The proxy issued those ids
 * (response-ids.ts), each naming its reply in the log, so it answers them from the log as the API
 * answers them from its storage: the body then reads as if the client had sent the items.
 *
 * A message or call reference becomes the reply's text or that call as the log holds it. A
 * reasoning reference becomes nothing: the reasoning a client echoes is never what goes upstream,
 * the log's copy is, given back with the reply it belongs to (client-render.ts). A reply that
 * streamed its text as two items is named twice and given once. An id the proxy did not issue, or
 * whose reply the log does not hold, is the API's 404.
 */
import { ProxyError } from '../../core/errors.js';
import type { AssistantMessage } from '../../core/types.js';
import type { ReplyLookup } from '../types.js';
import { itemRefOf, refToId, type ItemKind } from './response-ids.js';
import { functionCallItem, messageItem } from './stream-events.js';

interface Named {
  /** The item's place in `input`, its id and what the id names. */
  at: number;
  id: string;
  session: string;
  seq: number;
  kind: ItemKind;
}

export async function resolveItemReferences(body: unknown, replies: ReplyLookup): Promise<unknown> {
  const input = (body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input)) return body;
  const named: Named[] = [];
  input.forEach((item: unknown, at) => {
    if (!isReference(item)) return;
    const id = (item as { id?: unknown }).id;
    const ref = typeof id === 'string' ? itemRefOf(id) : undefined;
    if (ref === undefined) throw notFound(id, at);
    named.push({ at, id: id as string, session: ref.ref.session, seq: ref.ref.seq, kind: ref.kind });
  });
  if (named.length === 0) return body;

  // One lookup per session, for every reply of it the body names.
  const wanted = new Map<string, Set<number>>();
  for (const n of named) wanted.set(n.session, (wanted.get(n.session) ?? new Set()).add(n.seq));
  const found = new Map<string, ReadonlyMap<number, AssistantMessage>>();
  for (const [session, seqs] of wanted) found.set(session, await replies(session, seqs));

  const out: unknown[] = [...input];
  const given = new Map<string, { text: boolean; calls: number }>();
  for (const n of named) {
    const reply = found.get(n.session)?.get(n.seq);
    if (reply === undefined) throw notFound(n.id, n.at);
    const response = refToId({ session: n.session, seq: n.seq });
    const done = given.get(response) ?? { text: false, calls: 0 };
    given.set(response, done);
    let item: unknown;
    if (n.kind === 'msg') {
      if (reply.content === null) throw notFound(n.id, n.at);
      item = done.text ? undefined : messageItem(n.id, reply.content);
      done.text = true;
    } else if (n.kind === 'fc') {
      const call = reply.tool_calls?.[done.calls++];
      if (call === undefined) throw notFound(n.id, n.at);
      item = functionCallItem(n.id, call);
    }
    out[n.at] = item;
  }
  return { ...(body as object), input: out.filter((item) => item !== undefined) };
}

function isReference(item: unknown): boolean {
  return typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'item_reference';
}

function notFound(id: unknown, at: number): ProxyError {
  return new ProxyError('item_not_found', { id: String(id) }, { param: `input[${at}]` });
}
