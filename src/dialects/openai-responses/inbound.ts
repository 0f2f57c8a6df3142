/**
 * The openai-responses wire's client side: `POST /v1/responses`, as Codex (`wire_api =
 * "responses"`) and the SDK's `responses.create` send it, answered in the Responses shapes. Errors
 * before a stream use OpenAI's envelope, which the Responses API shares with Chat Completions.
 */
import { errorBody, ProxyError } from '../../core/errors.js';
import { sseJson } from '../sse-writer.js';
import { bearerOf } from '../wire-headers.js';
import type { ClientRequest, InboundDialect, ReplyMeta } from '../types.js';
import type { ToolSpec } from '../../core/types.js';
import { deepFreeze } from '../../core/deep-freeze.js';
import { FrozenResults } from '../../core/list-lineage.js';
import { createEventRenderer, renderResponse, type ResponseMeta } from './client-render.js';
import { asCompactionRequest, COMPACT_PATH, createCompactionRenderer, keptUserItems, renderCompacted, renderCompaction } from './compaction.js';
import { ENCRYPTED_REASONING } from './encode-request.js';
import { toConversation, toParams, toTools } from './inbound-convert.js';
import { parseResponsesRequest, type ParsedResponses } from './inbound-parse.js';
import { resolveItemReferences } from './item-references.js';
import { idToRef, responseIdOf } from './response-ids.js';
import type { ResponsesSseEvent } from './stream-events.js';

/**
 * The neutral tools made of a tools list the head memo handed over unchanged (the same frozen
 * array): one conversion, and one array, which the session compares by identity (session/heads.ts).
 */
const TOOLS = new FrozenResults<ToolSpec[]>();

function toolsOf(parsed: ParsedResponses): ToolSpec[] {
  return TOOLS.of(parsed.rawTools, (kept) => (kept ? deepFreeze(toTools(parsed.tools)) : toTools(parsed.tools)));
}

export const openaiResponsesInbound: InboundDialect = {
  wire: 'openai-responses',
  paths: ['/v1/responses', COMPACT_PATH],
  bodyList: 'input',
  apiKey: (headers) => bearerOf(headers.authorization),
  resolveReferences: resolveItemReferences,
  parse(body, images, target): ClientRequest {
    const endpoint = target?.route === COMPACT_PATH;
    const parsed = parseResponsesRequest(endpoint ? asCompactionRequest(body) : body);
    const conversation = toConversation(parsed.body.instructions, parsed.input, images);
    const out: ClientRequest = {
      model: parsed.body.model,
      stream: parsed.body.stream === true,
      // The Responses API always reports usage, on the terminal event.
      includeUsage: true,
      system: conversation.system,
      messages: conversation.messages,
      tools: toolsOf(parsed),
      params: toParams(parsed.body),
      idFields: parsed.body as Record<string, unknown>,
      opaqueReasoning: parsed.body.include?.includes(ENCRYPTED_REASONING) === true,
    };
    if (parsed.input.at(-1)?.type === 'compaction_trigger') {
      out.compaction = endpoint ? { kept: keptUserItems(parsed.input) } : {};
      // A summary, not a step of the task: the model is offered the tools (so the prefix stays the
      // conversation's) and asked not to call one.
      out.params.tool_choice = 'none';
    }
    const previous = parsed.body.previous_response_id;
    if (previous !== undefined && previous !== null) {
      const ref = idToRef(previous);
      if (ref === undefined) throw new ProxyError('previous_response_not_found', { id: previous }, { param: 'previous_response_id' });
      out.continues = { ...ref, id: previous };
    }
    return out;
  },
  renderReply(reply, meta, req) {
    const kept = req.compaction?.kept;
    if (kept !== undefined) return renderCompacted(reply, responseMeta(meta, req), kept);
    return (req.compaction !== undefined ? renderCompaction : renderResponse)(reply, responseMeta(meta, req));
  },
  openStream(meta, req) {
    const renderer = (req.compaction !== undefined ? createCompactionRenderer : createEventRenderer)(responseMeta(meta, req));
    return {
      contentType: 'text/event-stream; charset=utf-8',
      delta: (delta) => frames(renderer.delta(delta)),
      end: (final) => frames(renderer.end(final)),
      error: (err) => frames(renderer.error(err)),
    };
  },
  errorBody,
};

function responseMeta(meta: ReplyMeta, req: ClientRequest): ResponseMeta {
  return {
    id: responseIdOf(meta),
    compaction: req.compaction !== undefined,
    createdAt: meta.created,
    model: meta.model,
    opaqueReasoning: req.opaqueReasoning === true,
    previousResponseId: req.continues?.id ?? null,
  };
}

/** `event: <type>` and the JSON data, as the API frames them (Codex reads `type` from the data). */
function frames(events: readonly ResponsesSseEvent[]): string {
  return events.map((e) => sseJson(e.data, e.event)).join('');
}
