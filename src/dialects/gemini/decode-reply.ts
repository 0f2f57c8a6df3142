/**
 * A whole `GenerateContentResponse` -> NeutralReply, read by the same assembler as the stream
 * (decode-stream.ts), so both give the same reply. A 2xx body holding `error` is that error.
 */
import { ProxyError } from '../../core/errors.js';
import type { DialectRoute } from '../../core/route.js';
import type { NeutralReply } from '../../core/types.js';
import type { DecodeContext, UpstreamError } from '../types.js';
import { toProxyError, upstreamErrorFromBody } from '../upstream-error.js';
import { asObject } from '../wire-read.js';
import { errorOf, ReplyAssembler } from './decode-stream.js';

export function decodeReply(status: number, body: unknown, route: DialectRoute, ctx?: DecodeContext): NeutralReply {
  const reply = asObject(body);
  if (reply === undefined) throw new ProxyError('upstream_bad_reply', { detail: 'the reply is not a JSON object' });
  if (reply.error !== undefined) throw toProxyError(status, errorOf(reply));
  const assembler = new ReplyAssembler(route, ctx?.idSeed);
  assembler.read(reply);
  return assembler.reply();
}

/** An HTTP error body: Google's envelope, its `status` kept as the type. */
export function decodeError(status: number, bodyText: string): UpstreamError {
  const err = upstreamErrorFromBody(status, bodyText);
  try {
    const type = (JSON.parse(bodyText) as { error?: { status?: unknown } }).error?.status;
    return typeof type === 'string' ? { ...err, type } : err;
  } catch {
    return err;
  }
}
