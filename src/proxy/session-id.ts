/** The explicit session id a client sent, if any: headers first, then body fields (docs/architecture.md 5.1). */
import type { IncomingHttpHeaders } from 'node:http';

export function explicitSessionId(
  headers: IncomingHttpHeaders,
  body: Record<string, unknown>,
  order: { idHeaders: readonly string[]; idBodyFields: readonly string[] },
): string | undefined {
  for (const name of order.idHeaders) {
    const value = headers[name.toLowerCase()];
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first.trim() !== '') return first.trim();
  }
  for (const field of order.idBodyFields) {
    const value = body[field];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}
