/**
 * The common message shapes, recognised by plain type checks: a message that passes here passes
 * the wire's zod schema too (a property test holds the two together), so only a message that does
 * not is handed to zod, for the error naming its field. A 2,000-message conversation was spending
 * milliseconds per request in zod; these checks are a few property reads per message.
 */

type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);
const isText = (v: unknown): boolean => typeof v === 'string';
const isName = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

function isTextPart(v: unknown): boolean {
  return isObject(v) && v.type === 'text' && isText(v.text);
}

function isPart(v: unknown): boolean {
  if (isTextPart(v)) return true;
  if (!isObject(v) || v.type !== 'image_url' || !isObject(v.image_url)) return false;
  const { url, detail } = v.image_url;
  return isName(url) && (detail === undefined || detail === 'auto' || detail === 'low' || detail === 'high');
}

const textContent = (v: unknown): boolean => isText(v) || (Array.isArray(v) && v.every(isTextPart));

function isToolCall(v: unknown): boolean {
  return isObject(v) && isName(v.id) && (v.type === undefined || v.type === 'function')
    && isObject(v.function) && isName(v.function.name) && isText(v.function.arguments);
}

/** True when the message certainly has one of the wire's shapes; false means "ask the schema". */
export function isWellFormedMessage(raw: unknown): boolean {
  if (!isObject(raw)) return false;
  switch (raw.role) {
    case 'system':
    case 'developer':
      return textContent(raw.content);
    case 'user':
      return isText(raw.content) || (Array.isArray(raw.content) && raw.content.every(isPart));
    case 'assistant':
      return (raw.content === undefined || raw.content === null || textContent(raw.content))
        && (raw.tool_calls === undefined || (Array.isArray(raw.tool_calls) && raw.tool_calls.every(isToolCall)));
    case 'tool':
      return isName(raw.tool_call_id) && textContent(raw.content);
    default:
      return false;
  }
}
