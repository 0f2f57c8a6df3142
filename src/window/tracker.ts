/**
 * Where a window starts (docs/decisions.md, Start tracker). A reader needs only the events from the
 * start, plus a few carried events from before it, to build the same request as from every event:
 *
 *   foldEvents([...carried, ...eventsFrom(start)]).build(x)  ==  foldEvents(all).build(x)
 *
 * The start moves to a `client.rewrite` whose from_seq is at or before the first live
 * conversation entry: a client that compacted its whole history. Nothing before it can reach a
 * later window (entries before it are gone, and elisions and staleness are named by seq). The
 * carried events are the ones in effect at that point: the latest session.start/resume (the
 * recipe), the latest catalog, and the head system message that set the leading prompt (under
 * `follow` the latest one; under `append` the first, since later ones joined the conversation).
 * They are given in the order to fold them: recipe first, then by seq.
 *
 * A session with any summary event is held whole: a summary can name a span from before the
 * start, and revoking it brings that span back.
 *
 * The tracker is pure and keeps O(live entries) numbers. It counts as a possible conversation
 * entry every head system message under `append` after the first; when such a message was not
 * appended (it repeated the latest), that only makes the tracker more cautious.
 */
import type { LogEvent } from '../core/events.js';

export interface EventPosition {
  seq: number;
  /** Byte offset of the event's line in its log, as given to `apply`. */
  offset: number;
}

export interface StartPoint {
  start: EventPosition;
  /** Events before `start` to fold first, in folding order. */
  carried: EventPosition[];
}

export class StartTracker {
  #first: EventPosition | undefined;
  #start: StartPoint | undefined;
  #recipe: EventPosition | undefined;
  #policy: 'follow' | 'append' = 'follow';
  #catalog: EventPosition | undefined;
  #prompt: EventPosition | undefined;
  /** Seqs of live conversation entries, ascending. */
  readonly #live: number[] = [];
  #whole = false;

  apply(event: LogEvent, byteOffset: number): void {
    const here = { seq: event.seq, offset: byteOffset };
    if (this.#first === undefined) {
      this.#first = here;
      this.#start = { start: here, carried: [] };
    }
    switch (event.type) {
      case 'session.start':
      case 'session.resume':
        this.#recipe = here;
        this.#policy = event.recipe.system;
        return;
      case 'catalog':
        this.#catalog = here;
        return;
      case 'client.msg':
        if (event.head === true && event.msg.role === 'system' && (this.#policy === 'follow' || this.#prompt === undefined)) {
          this.#prompt = here;
        } else {
          this.#live.push(event.seq);
        }
        return;
      case 'llm.resp':
        if (event.aborted !== true) this.#live.push(event.seq);
        return;
      case 'client.rewrite': {
        const firstLive = this.#live[0];
        if (!this.#whole && (firstLive === undefined || event.from_seq <= firstLive)) {
          const carried = [this.#recipe, ...[this.#catalog, this.#prompt].filter((p) => p !== undefined).sort((a, b) => a.seq - b.seq)];
          this.#start = { start: here, carried: carried.filter((p): p is EventPosition => p !== undefined) };
        }
        while (this.#live.length > 0 && this.#live[this.#live.length - 1]! >= event.from_seq) this.#live.pop();
        return;
      }
      case 'summary.add':
      case 'summary.revoke':
        this.#whole = true;
        this.#start = { start: this.#first, carried: [] };
        return;
      default:
        return;
    }
  }

  /** The point a window can be built from; undefined before the first event. */
  get point(): StartPoint | undefined {
    if (this.#start === undefined) return undefined;
    return { start: { ...this.#start.start }, carried: this.#start.carried.map((p) => ({ ...p })) };
  }
}
