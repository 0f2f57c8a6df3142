/**
 * Which of a fixed set of substrings a text holds, in one pass over it. Redaction's rules each
 * need one of a few literals (`sk-`, `ghp_`, `Bearer`, ...); asking each rule in turn meant ~60
 * scans of every string the log writes, which cost more than the rest of a request's logging
 * (docs/decisions.md, Redaction by shape, never by entropy). Here a pair table of the literals'
 * first two characters turns away almost every position at the cost of two array reads. Pure.
 *
 * A caseless literal (`secret`, `cookie`) is found in any ASCII letter case, as a regex's `i` flag
 * without `u` finds it: its pairs go in the table in every case, so the pass costs no more per
 * character, and a hit is compared letter by letter. Non-ASCII characters never match an ASCII
 * letter there (ECMAScript's Canonicalize keeps them apart), nor here.
 */
export class NeedleScan {
  readonly #needles: readonly string[];
  /** Each needle's character codes (the pair table has vouched for its first two). */
  readonly #codes: readonly Uint8Array[];
  /** Per needle, 1 when it is matched ignoring ASCII case. */
  readonly #caseless: Uint8Array;
  /** By the first two characters (both ASCII, first * 128 + second): 1 + the index in #starting, or 0. */
  readonly #pairs = new Uint16Array(128 * 128);
  /** The indexes of the needles that start with each pair in use. */
  readonly #starting: number[][] = [];

  /**
   * Needles of at least two printable ASCII characters; `caseless` ones, given in lower case, are
   * found in any case and indexed after `needles`.
   */
  constructor(needles: readonly string[], caseless: readonly string[] = []) {
    this.#needles = [...needles, ...caseless];
    this.#caseless = new Uint8Array(this.#needles.length).fill(1, needles.length);
    this.#codes = this.#needles.map((needle) => Uint8Array.from(needle, (c) => c.charCodeAt(0)));
    this.#needles.forEach((needle, i) => {
      if (needle.length < 2 || !/^[\x20-\x7e]+$/.test(needle)) throw new Error(`a needle must be two or more printable ASCII characters: ${JSON.stringify(needle)}`);
      if (i >= needles.length && needle !== needle.toLowerCase()) throw new Error(`a caseless needle is given in lower case: ${JSON.stringify(needle)}`);
      const firsts = i >= needles.length ? cases(needle[0]!) : [needle[0]!];
      const seconds = i >= needles.length ? cases(needle[1]!) : [needle[1]!];
      for (const a of firsts) {
        for (const b of seconds) {
          const pair = a.charCodeAt(0) * 128 + b.charCodeAt(0);
          if (this.#pairs[pair] === 0) this.#pairs[pair] = this.#starting.push([]);
          this.#starting[this.#pairs[pair]! - 1]!.push(i);
        }
      }
    });
  }

  get size(): number {
    return this.#needles.length;
  }

  indexOf(needle: string, caseless = false): number {
    const i = this.#needles.findIndex((n, k) => n === needle && (this.#caseless[k] === 1) === caseless);
    if (i < 0) throw new Error(`not a ${caseless ? 'caseless ' : ''}needle: ${needle}`);
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
        if (found[n] !== 0) continue;
        // Compared here, not by a call: the pairs of common words (`co`, `nt`) are hits in most texts.
        // Past the text's end charCodeAt gives NaN, which equals nothing.
        const codes = this.#codes[n]!;
        let j = 2;
        if (this.#caseless[n] === 0) {
          while (j < codes.length && text.charCodeAt(i + j) === codes[j]) j++;
        } else {
          for (; j < codes.length; j++) {
            const c = text.charCodeAt(i + j);
            if ((c >= 65 && c <= 90 ? c + 32 : c) !== codes[j]) break;
          }
        }
        if (j === codes.length) found[n] = 1;
      }
    }
    return found;
  }
}

/** The character in both ASCII cases, or itself. */
function cases(c: string): string[] {
  const lower = c.toLowerCase();
  const upper = c.toUpperCase();
  return lower === upper ? [c] : [lower, upper];
}
