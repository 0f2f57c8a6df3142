/**
 * A client's token count (`POST /v1/messages/count_tokens`): asked of the upstream when it speaks
 * the client's wire and has a count endpoint (Anthropic's), else estimated here as the window
 * estimates (bytes / 3, src/core/estimate.ts). The header `x-token-count` says which:
 * `upstream` or `estimate`. Nothing is logged: a count is not part of any conversation.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { canonicalJson } from '../core/canonical.js';
import { estimateMessageTokens, estimateTextTokens } from '../core/estimate.js';
import { resolveRoute } from '../config/routes.js';
import { dialectFor } from '../dialects/registry.js';
import type { ClientRequest, CountTokensEndpoint, InboundDialect } from '../dialects/types.js';
import type { AppDeps } from './app.js';
import { forwardedHeaders } from './forwarded-headers.js';
import { requestTarget } from './pipeline/admit.js';
import { classifyTransportError } from './upstream.js';

export const COUNT_HEADER = 'x-token-count';

export async function countTokens(inbound: InboundDialect, endpoint: CountTokensEndpoint, req: FastifyRequest, reply: FastifyReply, deps: AppDeps): Promise<void> {
  // Asked for a client key as a conversation is: the count may go to the upstream on the proxy's credential.
  const target = requestTarget(req);
  const presented = inbound.apiKey(req.headers, target);
  const key = deps.auth?.identify(presented);
  const client = endpoint.parse(req.body, (url, detail, param) => deps.images.put(url, detail, param), target);
  const route = resolveRoute(deps.config, client.model);
  deps.auth?.allow(key, route.name);
  const dialect = dialectFor(route.dialect.wire);
  if (dialect.encodeCountTokens === undefined || inbound.wire !== route.dialect.wire) {
    await reply.header(COUNT_HEADER, 'estimate').send(endpoint.render(estimate(client)));
    return;
  }
  const encoded = dialect.encodeCountTokens(req.body as Record<string, unknown>, route.dialect);
  Object.assign(encoded.headers, forwardedHeaders(req.headers, dialect, route.dialect.headers));
  // A client key is the proxy's own: it is never passed on to the upstream.
  const apiKey = route.apiKey ?? (key === undefined ? presented : undefined);
  if (apiKey !== undefined) Object.assign(encoded.headers, dialect.authHeaders(apiKey));
  let text: string;
  let status: number;
  try {
    const upstream = await deps.upstreams.send(route.provider, route.dialect.baseUrl, encoded, route.timeouts, AbortSignal.timeout(route.timeouts.headers_ms));
    status = upstream.status;
    text = await upstream.body.text();
  } catch (err) {
    throw classifyTransportError(err, route.provider, route.timeouts);
  }
  await reply.status(status).header('content-type', 'application/json').header(COUNT_HEADER, 'upstream').send(text);
}

/** The prompt as the window would estimate it: system, messages, and the tools' canonical JSON. */
function estimate(client: ClientRequest): number {
  let tokens = client.system === undefined ? 0 : estimateTextTokens(client.system);
  for (const msg of client.messages) tokens += estimateMessageTokens(msg);
  if (client.tools.length > 0) tokens += estimateTextTokens(canonicalJson(client.tools));
  return tokens;
}
