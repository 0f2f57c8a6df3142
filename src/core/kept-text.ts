/**
 * Texts made from a value that is never changed once made (a session's tool catalogue: event
 * bodies are not changed after they are logged), kept by the value's identity and the text's kind,
 * so a text repeated on every request is made once. They go when the value does (a WeakMap).
 */
const kept = new WeakMap<object, Map<string, string>>();

/** `make()`, the first time `value` is asked for under `kind`; what it gave, after that. */
export function keptText(value: object, kind: string, make: () => string): string {
  let texts = kept.get(value);
  if (texts === undefined) {
    texts = new Map();
    kept.set(value, texts);
  }
  let text = texts.get(kind);
  if (text === undefined) {
    text = make();
    texts.set(kind, text);
  }
  return text;
}
