/**
 * The first stage: the body read in the client's wire, the client's key checked, the route
 * resolved, the parameters as the log will hold them. Throws a 4xx for bad input; nothing is
 * logged before this stage has passed.
 */
import type { FastifyRequest } from 'fastify';
import { resolveRoute } from '../../config/routes.js';
import { ProxyError } from '../../core/errors.js';
import { withoutRefused } from '../../dialects/extra-fields.js';
import { droppedFields, withoutSampling } from '../../dialects/model-params.js';
import { dialectFor } from '../../dialects/registry.js';
import type { InboundDialect, RequestTarget } from '../../dialects/types.js';
import { redactDeep } from '../../log/redact.js';
import { routeLabels } from '../../metrics/series.js';
import { answerKey } from '../../session/manager.js';
import { withoutVolatile } from '../../window/volatile-lines.js';
import type { AppDeps } from '../app.js';
import { forwardedHeaders } from '../forwarded-headers.js';
import { retrySignal } from '../retries.js';
import { summaryOf } from '../request-log.js';
import { explicitSessionId } from '../session-id.js';
import type { Admitted } from './call.js';

/** The route the request matched, its path parameters and query (a wire that names its model in the path reads them). */
export function requestTarget(req: FastifyRequest): RequestTarget {
  return { route: req.routeOptions.url ?? '', params: req.params as RequestTarget['params'], query: req.query as RequestTarget['query'] };
}

/**
 * Read the body in the client's wire, resolve the route. Throws a 4xx for bad input; the key's
 * budget and rate are checked next (`limit`). `body`: the request's, with what it names in the log
 * put in place (`resolveReferences`).
 */
export function admit(inbound: InboundDialect, req: FastifyRequest, deps: AppDeps, body: unknown = req.body): Admitted {
  const target = requestTarget(req);
  const presented = inbound.apiKey(req.headers, target);
  const key = deps.auth?.identify(presented);
  const parsed = inbound.parse(body, (url, detail, param) => deps.images.put(url, detail, param), target);
  const route = resolveRoute(deps.config, parsed.model);
  deps.auth?.allow(key, route.name);
  if (key !== undefined) summaryOf(req).client = key.name;
  // Lines that change every request (a per-request nonce) never reach the log, so never the prefix.
  const unredacted = withoutVolatile(parsed, route.volatileLines);
  // Parameters go into llm.req, which the log redacts: they go upstream as the log holds them,
  // so that replay rebuilds the digest (a credential in `metadata` never leaves either), less the
  // fields the upstream refuses (named in the record).
  const refused = withoutRefused(redactDeep(unredacted.params).value, route.dialect.wire, route.refuses);
  const params = route.reasoningModel ? withoutSampling(refused, route.dialect.model) : refused;
  const dropped = droppedFields(params);
  if (dropped.length > 0) summaryOf(req).dropped = dropped;
  const client = { ...unredacted, params };
  const retry = retrySignal(req.headers);
  const dialect = dialectFor(route.dialect.wire);
  return {
    inbound,
    client,
    route,
    dialect,
    labels: routeLabels(route),
    key,
    // A client key is the proxy's own: it is never passed on to the upstream.
    apiKey: route.apiKey ?? (key === undefined ? presented : undefined),
    passThroughKey: key === undefined ? presented : undefined,
    forwarded: forwardedHeaders(req.headers, dialect, route.dialect.headers),
    incoming: {
      explicitId: explicitSessionId(req.headers, client.idFields, deps.config.sessions),
      system: client.system,
      tools: client.tools,
      messages: client.messages,
      // Redacted here so each session.start's walk finds it done: once per route (redact.ts).
      recipe: redactDeep(route.recipe).value,
      ...(retry === undefined ? {} : { retry: { ...retry, key: answerKey(route.name, route.dialect.model, client.params) } }),
    },
  };
}

/**
 * The body with the items it names in the log put in their places (Responses' `item_reference`,
 * docs/inbound.md). Before `admit`, so the body is read as if the client had sent them; the
 * client's key is checked first, so a caller without one reads nothing from the log.
 */
export async function resolveReferences(resolve: NonNullable<InboundDialect['resolveReferences']>, inbound: InboundDialect, req: FastifyRequest, deps: AppDeps): Promise<unknown> {
  return await resolve(req.body, async (session, seqs) => {
    deps.auth?.identify(inbound.apiKey(req.headers, requestTarget(req)));
    return deps.sessions.repliesAt(session, seqs);
  });
}

/**
 * A request that names a logged reply instead of sending the conversation (Responses'
 * `previous_response_id`): the conversation up to that reply goes before its messages, and the
 * session that holds it is the one the request continues (docs/inbound.md).
 */
export async function continueFrom(a: Admitted, deps: AppDeps): Promise<void> {
  const ref = a.client.continues!;
  const before = await deps.sessions.conversationAt(ref.session, ref.seq);
  if (before === undefined) throw new ProxyError('previous_response_not_found', { id: ref.id }, { param: 'previous_response_id' });
  a.incoming.messages = [...before.messages, ...a.incoming.messages];
  a.incoming.system ??= before.system;
  a.incoming.continues = ref.session;
}

/**
 * The client key's budget and rate (a 429 when over either). On PostgreSQL they are asked in the
 * statement that claims the request's session (alone when it starts one), when its turn comes.
 */
export async function limit(a: Admitted, deps: AppDeps): Promise<void> {
  const admission = deps.limits?.inClaim(a.key);
  if (admission !== undefined) a.incoming.admission = admission;
  else await deps.limits?.admit(a.key);
}
