/**
 * Which call each tool result answers, decided as entries are appended, by the walk's rule
 * (walk.ts): the batch right before it, only tool results in between, the first result per id.
 * Folds and per-tool caps read a result's call from it (window-v3).
 */
import type { Entry } from './entry.js';

export class CallPairing {
  /** The batch a tool result appended now would answer, and the call ids already answered after it. */
  #batch: { entry: Entry; answered: Set<string> } | undefined;

  /** An entry was appended. */
  append(e: Entry): void {
    const src = e.source;
    if (src.role !== 'tool') {
      this.#batch = e.calls.length > 0 ? { entry: e, answered: new Set() } : undefined;
      return;
    }
    const batch = this.#batch;
    if (batch === undefined || batch.answered.has(src.tool_call_id)) return;
    const call = batch.entry.calls.find((c) => c.id === src.tool_call_id);
    if (call === undefined) return;
    batch.answered.add(call.id);
    e.answers(call);
  }

  /** A rewrite left `entries`: the next result answers their last batch, as if the others were never there. */
  truncated(entries: readonly Entry[]): void {
    let j = entries.length - 1;
    while (j >= 0 && entries[j]!.source.role === 'tool') j--;
    const last = entries[j];
    this.#batch = last !== undefined && last.calls.length > 0 ? { entry: last, answered: new Set() } : undefined;
    for (let k = j + 1; k < entries.length; k++) {
      const src = entries[k]!.source;
      if (this.#batch !== undefined && src.role === 'tool' && entries[k]!.paired) this.#batch.answered.add(src.tool_call_id);
    }
  }
}
