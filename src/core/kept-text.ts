/**
 * Texts made from a value that is never changed once made (a session's tool catalogue: event
 * bodies are not changed after they are logged; a message, keyed and fingerprinted), kept by the
 * value's identity and the text's kind, so a text repeated on every request is made once. One
 * WeakMap per kind, so a value holds nothing more than its texts; they go when it does.
 */
const kept = new Map<string, WeakMap<object, string>>();

/** `make()`, the first time `value` is asked for under `kind`; what it gave, after that. */
export function keptText(value: object, kind: string, make: () => string): string {
  let texts = kept.get(kind);
  if (texts === undefined) {
    texts = new WeakMap();
    kept.set(kind, texts);
  }
  let text = texts.get(value);
  if (text === undefined) {
    text = make();
    texts.set(value, text);
  }
  return text;
}
