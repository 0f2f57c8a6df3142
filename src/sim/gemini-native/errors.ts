/**
 * Errors as Google's APIs send them: `{"error":{"code":400,"message":"...","status":"INVALID_ARGUMENT"}}`
 * (google.rpc.Status in JSON: the HTTP code, and the canonical status name for it).
 */
export class GoogleError extends Error {
  readonly code: number;
  readonly status: string;

  constructor(code: number, message: string, status = statusFor(code)) {
    super(message);
    this.name = 'GoogleError';
    this.code = code;
    this.status = status;
  }

  body(): { error: { code: number; message: string; status: string } } {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}

/** The canonical status name Google pairs with each HTTP code. */
export function statusFor(code: number): string {
  switch (code) {
    case 400: return 'INVALID_ARGUMENT';
    case 401: return 'UNAUTHENTICATED';
    case 403: return 'PERMISSION_DENIED';
    case 404: return 'NOT_FOUND';
    case 409: return 'ALREADY_EXISTS';
    case 429: return 'RESOURCE_EXHAUSTED';
    case 499: return 'CANCELLED';
    case 500: return 'INTERNAL';
    case 501: return 'UNIMPLEMENTED';
    case 503: return 'UNAVAILABLE';
    case 504: return 'DEADLINE_EXCEEDED';
    default: return code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

export function invalidArgument(message: string): GoogleError {
  return new GoogleError(400, message);
}

/** What the API answers for a cache that does not exist, has expired, or is someone else's. */
export function cacheNotFound(): GoogleError {
  return new GoogleError(403, 'CachedContent not found (or permission denied)');
}

/** `[[error STATUS]]`. */
export function directedGoogleError(code: number): GoogleError {
  return new GoogleError(code, `Simulated error ${code} (asked for by [[error ${code}]]).`);
}
