/**
 * Which of a fixed set of substrings a text holds, in one pass over it. Redaction's rules each
 * need one of a few literals (`sk-`, `ghp_`, `Bearer`, ...); asking each rule in turn meant ~60
 * scans of every string the log writes, which cost more than the rest of a request's logging
 * (docs/decisions.md, Redaction by shape, never by entropy). Here a pair table of the literals'
 * first two characters turns away almost every position at the cost of two array reads. Pure.
 */
export class NeedleScan {
  readonly #needles: readonly string[];
  /** By the first two characters (both ASCII, first * 128 + second): 1 + the index in #starting, or 0. */
  readonly #pairs = new Uint16Array(128 * 128);
  /** The indexes of the needles that start with each pair in use. */
  readonly #starting: number[][] = [];

  /** Needles of at least two ASCII characters. */
  constructor(needles: readonly string[]) {
    this.#needles = needles;
    needles.forEach((needle, i) => {
      if (needle.length < 2 || !/^[\x20-\x7e]+$/.test(needle)) throw new Error(`a needle must be two or more printable ASCII characters: ${JSON.stringify(needle)}`);
      const pair = needle.charCodeAt(0) * 128 + needle.charCodeAt(1);
      if (this.#pairs[pair] === 0) this.#pairs[pair] = this.#starting.push([]);
      this.#starting[this.#pairs[pair]! - 1]!.push(i);
    });
  }

  get size(): number {
    return this.#needles.length;
  }

  indexOf(needle: string): number {
    const i = this.#needles.indexOf(needle);
    if (i < 0) throw new Error(`not a needle: ${needle}`);
    return i;
  }

  /** A flag per needle, 1 where `text` holds it. */
  scan(text: string): Uint8Array {
    const found = new Uint8Array(this.#needles.length);
    const pairs = this.#pairs;
    const last = text.length - 1;
    let next = last >= 0 ? text.charCodeAt(0) : 0;
    for (let i = 0; i < last; i++) {
      const first = next;
      next = text.charCodeAt(i + 1);
      // Codes of 128 and up index past the table: undefined, never a pair in use.
      const slot = first < 128 ? pairs[first * 128 + next] : 0;
      if (slot === 0 || slot === undefined) continue;
      const starting = this.#starting[slot - 1]!;
      for (let k = 0; k < starting.length; k++) {
        const n = starting[k]!;
        if (found[n] === 0 && text.startsWith(this.#needles[n]!, i)) found[n] = 1;
      }
    }
    return found;
  }
}
