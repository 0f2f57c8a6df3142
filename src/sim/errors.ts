/**
 * The simulator's errors, shaped as OpenAI sends them: `{"error":{message,type,param,code}}`.
 * Kept apart from the proxy's error table on purpose: these are the upstream's codes (some
 * copied from real providers, e.g. Cerebras' `wrong_api_format`), not the proxy's.
 */
/** The body OpenAI answers an error with. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export class SimError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;

  constructor(status: number, code: string | null, message: string, param: string | null = null, type = errorTypeFor(status)) {
    super(message);
    this.name = 'SimError';
    this.status = status;
    this.code = code;
    this.param = param;
    this.type = type;
  }

  body(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /** The body as the upstream sends it: OpenAI's shape unless the mode has its own envelope. */
  wire(): unknown {
    return this.body();
  }
}

/**
 * An error in the upstream's own envelope (OpenRouter's `{error:{code: 400, message, metadata}}`,
 * the list Google's OpenAI endpoint answers with), so the proxy reads what it would really get.
 */
export class EnvelopedError extends SimError {
  readonly #envelope: unknown;

  constructor(status: number, code: string, message: string, param: string | null, envelope: unknown) {
    super(status, code, message, param);
    this.#envelope = envelope;
  }

  override wire(): unknown {
    return this.#envelope;
  }
}

/** OpenAI's `error.type` for a status. */
export function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function invalidRequest(message: string, param: string | null = null, code: string | null = 'invalid_request'): SimError {
  return new SimError(400, code, message, param);
}

/** OpenAI's wording, with the figures the simulator counted. */
/** An OpenAI-style request body: a JSON object, or the 400 that says what is wrong with it. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new SimError(400, 'invalid_json', `The request body is not valid JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

export function contextOverflow(promptTokens: number, contextTokens: number): SimError {
  return new SimError(
    400,
    'context_length_exceeded',
    `This model's maximum context length is ${contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
    'messages',
  );
}

/** The `[[error STATUS]]` directive. */
export function directedError(status: number): SimError {
  const code = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'sim_directed_error';
  return new SimError(status, code, `Simulated error ${status} (asked for by [[error ${status}]]).`);
}

/** Sent as the last SSE event by `[[stream-error]]`, and as a 500 when not streaming. */
export function streamFailure(): SimError {
  return new SimError(500, 'stream_error', 'The server had an error while processing your request (asked for by [[stream-error]]).');
}
