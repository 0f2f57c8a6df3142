/**
 * What every dialect (one per wire format) offers the proxy, and the neutral stream delta it
 * decodes an upstream stream into. Wire shapes stay inside each dialect's `wire-types.ts`.
 */
import type { ProxyError } from '../core/errors.js';
import type { AssistantMessage, FinishReason, ImagePart, NeutralMessage, NeutralReply, NeutralRequest, OpaqueBlock, RequestParams, ToolSpec, Usage } from '../core/types.js';
import type { DialectRoute, EncodedRequest, WireFormat, WireHints } from '../core/route.js';
import type { Framing, StreamEvent } from './stream-decoder.js';

export interface ResolvedImage {
  mime: string;
  base64: string;
}

export interface EncodeOptions {
  stream: boolean;
  /** Reads an image from the blob store by its SHA-256 (the window's messages hold no pixels). */
  resolveImage: (sha256: string) => ResolvedImage;
  /**
   * Keeps a message's wire serialisation from one request to the next (the window hands the same
   * frozen message object for an unchanged entry), bounded by the proxy; without it each request
   * serialises every message.
   */
  memo?: SerialisationMemo;
  /**
   * Keeps the last body built for a conversation, so a request that extends it copies the messages
   * they share in one piece (encoders whose bodies are a list of messages use it).
   */
  lists?: ListMemo;
}

/**
 * Wire bytes (UTF-8 JSON) per message object and per variant (the route options that shape it).
 * What `get` returns may be a view of the memo's own store, valid until the next `set`.
 */
export interface SerialisationMemo {
  get(msg: object, variant: string): Buffer | undefined;
  set(msg: object, variant: string, bytes: Buffer): void;
}

/**
 * A body built from a list of messages: the list, how each went (its variant and form), and where
 * each one's serialisation ends in `bytes`, counted from `start` (the first message's first byte).
 */
export interface KeptList {
  readonly variant: string;
  readonly items: readonly object[];
  readonly forms: readonly string[];
  readonly bytes: Buffer;
  readonly start: number;
  readonly ends: readonly number[];
}

/** The last body built for a list whose first message is `first`. */
export interface ListMemo {
  get(first: object): KeptList | undefined;
  set(first: object, kept: KeptList): void;
}

/** An upstream error, read from an HTTP error body or from an error event in a stream. */
export interface UpstreamError {
  message: string;
  /** The provider's error type (`invalid_request_error`, ...), when it gave one. */
  type?: string;
  /** The provider's error code as text (`context_length_exceeded`, `429`, ...), when it gave one. */
  code?: string;
  /** The prompt did not fit the model's context: the proxy answers `context_length_exceeded`. */
  contextOverflow: boolean;
}

/**
 * One piece of a streamed reply, in the order the upstream sent it. Tool-call `index` is the call's
 * position in the assembled reply's `tool_calls` (dense, from 0, in order of first appearance),
 * whatever index the upstream used. A call's `tool_call_start` comes before any of its arguments.
 */
export type StreamDelta =
  | { type: 'content'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_args'; index: number; text: string }
  | { type: 'finish'; reason: FinishReason }
  /** Usage so far; some upstreams send it more than once, the last one holds. */
  | { type: 'usage'; usage: Usage }
  /**
   * An opaque reasoning block, complete, where it stood among the reply's parts (after the thinking
   * text it carries went out as `thinking` deltas). Only a wire that can show it reads it
   * (Anthropic's signed thinking, Responses' encrypted reasoning); the others have the text
   * already. The Anthropic and Responses decoders send these; other dialects' blocks reach the log
   * through `finish()` alone.
   */
  | { type: 'block'; block: OpaqueBlock }
  /** An error event from the upstream after the stream had started (HTTP status was already 200). */
  | { type: 'error'; error: UpstreamError };

export interface StreamDecoder {
  /** Which event decoder (`createEventDecoder(framing)`) turns this upstream's bytes into events. */
  framing: Framing;
  onEvent(ev: StreamEvent): StreamDelta[];
  /**
   * The whole reply as `decodeReply` would give it for the same reply sent without streaming. After
   * an error event without a finish reason, `finish_reason` is `'error'`.
   */
  finish(): NeutralReply;
}

/**
 * What the proxy knows of the request a reply answers, for a dialect that must make up part of the
 * reply. Dialects that need none of it ignore it.
 */
export interface DecodeContext {
  /**
   * Unique per distinct request, the same for an identical retry (the proxy passes the neutral
   * request's digest). A dialect that makes tool-call ids mixes it in, so a call repeated in a
   * later reply gets a new id while a retried request gets the ids it got before.
   */
  idSeed?: string;
}

export interface Dialect {
  wire: WireFormat;
  encodeRequest(req: NeutralRequest, route: DialectRoute, hints: WireHints, opts: EncodeOptions): EncodedRequest;
  /** A 2xx JSON body -> reply. Throws `ProxyError` (`upstream_bad_reply`, or the error it holds). */
  decodeReply(status: number, body: unknown, route: DialectRoute, ctx?: DecodeContext): NeutralReply;
  createStreamDecoder(route: DialectRoute, ctx?: DecodeContext): StreamDecoder;
  /** A non-2xx body (any text, JSON or not) -> the upstream's error, with context overflow recognised. */
  decodeError(status: number, bodyText: string): UpstreamError;
  /**
   * The headers that carry a credential on this wire (`authorization: Bearer` here, `x-api-key`
   * on Anthropic's). Kept apart from `encodeRequest` so the key never reaches the log or a digest.
   */
  authHeaders(apiKey: string): Record<string, string>;
  /**
   * Client request headers that mean something on this wire and go to its upstream as the client
   * sent them (Anthropic's `anthropic-beta`, `anthropic-version`), unless config sets them. Lower case.
   */
  clientHeaders?: readonly string[];
  /**
   * Of `clientHeaders`, those whose value is a comma-separated list (Anthropic's `anthropic-beta`):
   * the client's entries are added to the ones the encoder set, not put in their place.
   */
  listHeaders?: readonly string[];
  /**
   * A client's token-count request of this same wire, for this upstream (its model, its headers);
   * absent where the wire has no count endpoint. The credential is added by the caller.
   */
  encodeCountTokens?(clientBody: Record<string, unknown>, route: DialectRoute): EncodedRequest;
  /**
   * Request parameters whose change invalidates the messages this wire's provider cached: a side
   * request on a conversation's prefix takes them from the conversation's last request
   * (session/side.ts). Absent: the provider's cache does not depend on parameters.
   */
  cacheKeyedParams?: readonly (keyof RequestParams)[];
}

/**
 * Stores an image the client sent (a data URL) and describes it for the log; `param` names where
 * it was, for the error when it is not one. The proxy passes it in: dialects do no I/O.
 */
export type ImageSink = (url: string, detail: 'auto' | 'low' | 'high' | undefined, param: string) => ImagePart;

/** A client's request as an inbound dialect reads it: neutral, its images stored. */
export interface ClientRequest {
  /** The model name the client asked for (a config route or `provider/model`). */
  model: string;
  stream: boolean;
  /** Usage at the end of the stream (OpenAI's `stream_options.include_usage`; always, where the wire always sends it). */
  includeUsage: boolean;
  /** Leading system prompt. */
  system: string | undefined;
  /** The conversation after the leading system prompt. */
  messages: NeutralMessage[];
  tools: ToolSpec[];
  params: RequestParams;
  /** Body fields an explicit session id may be read from (`[sessions] id_body_fields`), by name. */
  idFields: Record<string, unknown>;
  /**
   * The client asked for the upstream's opaque reasoning where its wire carries it (Responses'
   * `include: ["reasoning.encrypted_content"]`). Absent: false.
   */
  opaqueReasoning?: boolean;
  /**
   * The client asks for its conversation compacted (Responses' `compaction_trigger`, or its
   * `/v1/responses/compact` endpoint): the reply is answered as the wire's compaction item
   * (src/dialects/openai-responses/compaction.ts); `kept`, the endpoint's, are the client's user
   * messages that its answer lists before that item. Absent: not a compaction.
   */
  compaction?: { kept?: readonly unknown[] };
  /**
   * The logged reply this request continues (Responses' `previous_response_id`, read from an id the
   * proxy issued): the proxy puts the conversation up to that reply before `messages`.
   */
  continues?: ReplyRef & { id: string };
}

/** Where a reply is logged: its session and the seq of the `llm.req` it answered. */
export interface ReplyRef {
  session: string;
  seq: number;
}

/** The replies a session's log holds to requests `seqs`, by that seq (absent: none). */
export type ReplyLookup = (session: string, seqs: ReadonlySet<number>) => Promise<ReadonlyMap<number, AssistantMessage>>;

/** What the proxy knows of an answer before it has one. */
export interface ReplyMeta {
  id: string;
  /** Seconds since the epoch. */
  created: number;
  /** The model name as the client asked for it. */
  model: string;
  /** Where the reply is logged, when it is (a wire whose reply ids name it reads this). */
  logged?: ReplyRef;
}

/** A reply streamed to the client in its own wire's events. */
export interface ClientStream {
  readonly contentType: string;
  /** The text for one delta, in order (may be empty). */
  delta(delta: StreamDelta): string;
  /** The text that ends a whole reply: finish, usage, the wire's last event. */
  end(final: NeutralReply): string;
  /** An error after the stream started, as this wire's error event; the stream then ends. */
  error(err: ProxyError): string;
}

/** Request headers as node gives them. */
export type ClientHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * Where a request came in: the route pattern it matched, its path parameters and its query. A wire
 * that names the model or the credential outside the body (Gemini's `/models/{model}:generateContent`,
 * `?key=`) reads them here; the others ignore it.
 */
export interface RequestTarget {
  route: string;
  params: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string | undefined>>;
}

/** A token count for a client that asks for one, in its wire's shapes. */
export interface CountTokensEndpoint {
  path: string;
  /** The body as the conversation endpoint reads it (less what only a reply needs, like `max_tokens`). */
  parse(body: unknown, images: ImageSink, target?: RequestTarget): ClientRequest;
  /** The answer, when the proxy counted (estimated) it itself. */
  render(inputTokens: number): unknown;
}

/** The client's side of a wire: read its request, answer in its shapes. Pure, like the rest of a dialect. */
export interface InboundDialect {
  /** The wire format, so that an upstream error of the same wire can go back as it was. */
  wire: WireFormat;
  /** The endpoint paths this wire's clients post to. */
  paths: readonly string[];
  /** The body's top-level list that grows with the conversation: parsed only past what an earlier body shared (src/proxy/body-memo.ts). */
  bodyList: string;
  /** The credential the client sent, in the header this wire's clients use; passed through when the provider has none. */
  apiKey(headers: ClientHeaders, target?: RequestTarget): string | undefined;
  countTokens?: CountTokensEndpoint;
  /**
   * The body with the items it names instead of sending (Responses' `item_reference`) put in their
   * places, read from the log through `replies`; the body itself when it names none. Runs before
   * `parse`; throws a 404 for an item the log does not hold.
   */
  resolveReferences?(body: unknown, replies: ReplyLookup): Promise<unknown>;
  /** Validate and read a parsed JSON body; throws a ProxyError (4xx) naming the bad field. */
  parse(body: unknown, images: ImageSink, target?: RequestTarget): ClientRequest;
  renderReply(reply: NeutralReply, meta: ReplyMeta, req: ClientRequest): unknown;
  openStream(meta: ReplyMeta, req: ClientRequest): ClientStream;
  /** An error as this wire's clients read it (the HTTP status is the error's own). */
  errorBody(err: ProxyError): unknown;
}
