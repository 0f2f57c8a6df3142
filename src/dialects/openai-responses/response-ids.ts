/**
 * Response ids name where their reply is logged: `resp_<session>_<seq>`, the session's id and the
 * seq of the `llm.req` the reply answered. So `previous_response_id` needs no table of its own: the
 * proxy reads the conversation up to that reply from the session's log (docs/inbound.md). Item ids
 * follow from their response's (`msg_<session>_<seq>_<index>`), so an `item_reference` to one is
 * read from the log too (item-references.ts). A reply the log does not hold (none today) gets a
 * random id that names no session.
 */
import type { ReplyMeta, ReplyRef } from '../types.js';

const RESPONSE_ID = /^resp_([A-Za-z0-9_-][A-Za-z0-9._-]{0,199})_(\d{1,15})$/;
const ITEM_ID = /^(rs|msg|fc)_([A-Za-z0-9_-][A-Za-z0-9._-]{0,199})_(\d{1,15})_(\d{1,6})$/;

export type ItemKind = 'rs' | 'msg' | 'fc';

export function responseIdOf(meta: ReplyMeta): string {
  return meta.logged === undefined ? `resp_${meta.id}` : refToId(meta.logged);
}

export function refToId(ref: ReplyRef): string {
  return `resp_${ref.session}_${ref.seq}`;
}

/** The reply an id the proxy issued names; undefined for any other text. */
export function idToRef(id: string): ReplyRef | undefined {
  const match = RESPONSE_ID.exec(id);
  if (match === null) return undefined;
  const seq = Number(match[2]);
  return Number.isSafeInteger(seq) ? { session: match[1]!, seq } : undefined;
}

/** `rs_`, `msg_` or `fc_` and the response's id, with the item's index in `output`. */
export function itemIdOf(responseId: string, prefix: ItemKind, index: number): string {
  return `${prefix}_${responseId.slice('resp_'.length)}_${index}`;
}

/** The response, kind and index an item id the proxy issued names; undefined for any other text. */
export function itemRefOf(id: string): { ref: ReplyRef; kind: ItemKind; index: number } | undefined {
  const match = ITEM_ID.exec(id);
  if (match === null) return undefined;
  const seq = Number(match[3]);
  return Number.isSafeInteger(seq) ? { ref: { session: match[2]!, seq }, kind: match[1] as ItemKind, index: Number(match[4]) } : undefined;
}
