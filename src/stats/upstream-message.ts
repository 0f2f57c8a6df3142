/**
 * What an upstream said when it refused a call: its error body as the log holds it (`llm.error`'s
 * `body`), read for the message a person wants. Every wire's error shape carries `error.message`
 * (OpenAI, Anthropic, Gemini) or a top-level `message`; anything else is shown as its text. Pure.
 */

/** As much of it as a table or a page shows. */
const MESSAGE_CHARS = 2000;

export function upstreamMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    const inner = typeof parsed.error === 'object' && parsed.error !== null ? (parsed.error as { message?: unknown }).message : undefined;
    const message = inner ?? parsed.message;
    if (typeof message === 'string' && message !== '') return message.slice(0, MESSAGE_CHARS);
  } catch {
    // not JSON: its text
  }
  return body.slice(0, MESSAGE_CHARS);
}
