/**
 * The one SSE writer, for what the proxy streams to its clients (and what the simulator streams
 * to the proxy). Frames are strings; the caller writes them to its socket as they come.
 */

export const SSE_DONE = 'data: [DONE]\n\n';

/**
 * One event. `data` may hold line breaks: each line becomes its own `data:` line, which a reader
 * joins back with "\n" (CRLF and CR inside `data` come back as LF, as SSE defines).
 */
export function sseEvent(data: string, event?: string): string {
  let out = '';
  if (event !== undefined) {
    if (/[\r\n]/.test(event)) throw new TypeError('an SSE event name cannot hold a line break');
    out = `event: ${event}\n`;
  }
  if (!/[\r\n]/.test(data)) return `${out}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return out + '\n';
}

/** `data: <json>\n\n`. JSON.stringify escapes every line break, so this is always one data line. */
export function sseJson(value: unknown, event?: string): string {
  return sseEvent(JSON.stringify(value), event);
}

/** A comment line, ignored by readers: a keep-alive while the upstream is still thinking. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
