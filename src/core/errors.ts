/**
 * Every error the project raises, in one table: stable code -> HTTP status, OpenAI `error.type`,
 * and a message template. One class carries them; one function renders the OpenAI-shaped body.
 * `docs/errors.md` lists the same table (a test ties the two together).
 */

interface ErrorSpec {
  status: number;
  type: 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'rate_limit_error' | 'insufficient_quota' | 'api_error' | 'server_error' | 'cli_error';
  message: string;
}

export const ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error', message: 'The request body is not valid JSON: {detail}' },
  invalid_request: { status: 400, type: 'invalid_request_error', message: '{detail}' },
  previous_response_not_found: { status: 400, type: 'invalid_request_error', message: "Previous response with id '{id}' not found." },
  // 404, as the Responses API answers an item_reference it does not hold.
  item_not_found: { status: 404, type: 'invalid_request_error', message: "Item with id '{id}' not found." },
  unknown_role: { status: 400, type: 'invalid_request_error', message: 'Unknown role "{role}" at {param}; expected system, developer, user, assistant or tool.' },
  model_not_found: { status: 404, type: 'invalid_request_error', message: 'The model "{model}" does not exist. Known models: {known}.' },
  // 400, not 5xx: a client must not retry a route whose dialect this build does not have.
  wire_not_supported: { status: 400, type: 'invalid_request_error', message: 'The model "{model}" goes to provider "{provider}" (preset {preset}), whose wire format {wire} is not supported yet.' },
  model_not_allowed: { status: 403, type: 'invalid_request_error', message: 'The client key "{name}" may not use the model "{model}"; it may use: {allowed}.' },
  // 429 as OpenAI answers an exhausted quota (type insufficient_quota); Anthropic's clients read a 429 as rate_limit_error.
  budget_exceeded: { status: 429, type: 'insufficient_quota', message: 'The client key "{name}" has spent {spent} USD of its {budget} USD budget for {period}; {reset}.' },
  rate_limited: { status: 429, type: 'rate_limit_error', message: 'The client key "{name}" may send {limit} requests per minute; retry in {seconds} s.' },
  exposed_without_keys: { status: 500, type: 'cli_error', message: 'Listening on {host} would let anyone who reaches the port spend the configured keys: add [auth] keys, or say it is meant with [auth] open = true (or proxy serve --open).' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', message: 'The request body must be application/json, not {type}.' },
  origin_refused: { status: 403, type: 'invalid_request_error', message: 'Requests from the web page {origin} are refused: add it to allowed_origins to let a browser call the proxy.' },
  host_refused: { status: 403, type: 'invalid_request_error', message: 'The Host {host} is not this proxy\'s: add it to allowed_hosts if the proxy is reached under that name.' },
  body_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is larger than the limit of {limit} bytes.' },
  headers_too_large: { status: 431, type: 'invalid_request_error', message: 'The request headers are larger than the limit of {limit} bytes.' },
  json_too_deep: { status: 400, type: 'invalid_request_error', message: '{param} nests deeper than {limit} levels, the most the proxy reads.' },
  unauthorized: { status: 401, type: 'authentication_error', message: '{detail}' },
  // The inspector (src/inspector): a known key that is not an admin's, and a seq that is no request.
  admin_only: { status: 403, type: 'authentication_error', message: 'The client key "{name}" may not open the inspector: only a key marked admin = true, or the admin key, may.' },
  request_not_found: { status: 404, type: 'not_found_error', message: 'Session "{session}" has no request with seq {seq} (an llm.req).' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error', message: '{detail}' },
  upstream_error: { status: 502, type: 'api_error', message: 'The upstream answered {status}: {detail}' },
  upstream_unreachable: { status: 502, type: 'api_error', message: 'The upstream {provider} could not be reached: {detail}' },
  upstream_connect_timeout: { status: 504, type: 'api_error', message: 'Connecting to the upstream {provider} timed out after {ms} ms.' },
  upstream_headers_timeout: { status: 504, type: 'api_error', message: 'The upstream {provider} sent no response headers within {ms} ms.' },
  upstream_body_timeout: { status: 504, type: 'api_error', message: 'The upstream {provider} stopped sending its response for {ms} ms.' },
  upstream_deadline: { status: 504, type: 'api_error', message: 'The upstream {provider} did not finish within the request deadline of {ms} ms.' },
  upstream_reply_too_large: { status: 502, type: 'api_error', message: 'The upstream {provider} sent a reply larger than {limit} bytes, the most the proxy reads.' },
  upstream_bad_reply: { status: 502, type: 'api_error', message: 'The upstream {provider} sent a reply that could not be read: {detail}' },
  internal_error: { status: 500, type: 'server_error', message: 'Internal error: {detail}' },
  // 503s a client or balancer retries: the database is down (nothing of the request was written), or this replica is draining.
  store_unavailable: { status: 503, type: 'api_error', message: 'The session store cannot be reached ({detail}); nothing of this request was written, retry shortly.' },
  shutting_down: { status: 503, type: 'api_error', message: 'This proxy is shutting down and takes no new requests; retry (another replica answers).' },
  // Raised by the log, the window and the CLI; the CLI prints the message on one line.
  store_not_reached: { status: 500, type: 'cli_error', message: 'The session store could not be reached in the {seconds} s `proxy serve` waits for it at its start ({detail}); store.startup_wait_seconds sets the wait.' },
  config_invalid: { status: 500, type: 'cli_error', message: '{file}: {key}: {detail}' },
  config_syntax: { status: 500, type: 'cli_error', message: '{file}:{line}:{column}: invalid TOML: {detail}' },
  session_not_found: { status: 404, type: 'not_found_error', message: 'No session "{session}": {file} does not exist.' },
  log_malformed: { status: 500, type: 'cli_error', message: '{file}:{line}: {detail}' },
  log_locked: { status: 409, type: 'cli_error', message: '{file}: the session is locked by process {pid}.' },
  unknown_recipe_version: { status: 500, type: 'cli_error', message: '{file}:{line}: unknown window recipe version "{version}"; this build knows {known}.' },
  digest_mismatch: { status: 500, type: 'cli_error', message: '{file}:{line}: request seq {seq} rebuilt to digest {got}, the log recorded {want}.' },
  bad_argument: { status: 400, type: 'cli_error', message: '{detail}' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export type ErrorParams = Record<string, string | number>;

export class ProxyError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  /** The request field the error is about, OpenAI's `error.param`. */
  readonly param: string | null;
  /** Response headers the answer carries (`retry-after` on a 429). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, params: ErrorParams = {}, options: { param?: string; status?: number; cause?: unknown; headers?: Record<string, string> } = {}) {
    const spec = ERRORS[code];
    super(fill(spec.message, params), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProxyError';
    this.code = code;
    this.status = options.status ?? spec.status;
    this.type = spec.type;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }
}

function fill(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const value = params[key];
    return value === undefined ? whole : String(value);
  });
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * The one renderer of `{"error":{...}}` bodies. A code the `proxy` command prints (type
 * `cli_error`) can also answer an HTTP caller (a bad session id in the inspector's API, a session
 * another process holds): there it has the type an OpenAI client knows for its status.
 */
export function errorBody(err: ProxyError): OpenAIErrorBody {
  const type = err.type !== 'cli_error' ? err.type : err.status < 500 ? 'invalid_request_error' : 'server_error';
  return { error: { message: err.message, type, param: err.param, code: err.code } };
}

export function isProxyError(value: unknown): value is ProxyError {
  return value instanceof ProxyError;
}
