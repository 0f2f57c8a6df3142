/**
 * One conversation entry of the window (a client message or a model reply) and its memoised
 * renderings. Each variant a request may need (as logged, elided, with the blocks of one origin,
 * with only its answered calls) is built once, with its canonical JSON text and its estimate, and
 * reused by every later request: the upstream body is a concatenation of stored texts and the
 * digest hashes only what is new (docs/architecture.md section 12).
 *
 * Rendered messages are frozen: dialects and callers share them across requests.
 */
import { canonicalJson } from '../core/canonical.js';
import { estimateMessageTokens, estimateTextTokens } from '../core/estimate.js';
import type { AssistantMessage, NeutralMessage, OpaqueBlock, Origin, ToolCall, ToolMessage } from '../core/types.js';
import { applyCut, cutOf, type Cut } from './cap.js';
import { looksFailed, shapeOf, type CallShape } from './tool-calls.js';

export interface Rendered {
  readonly msg: NeutralMessage;
  /**
   * canonicalJson(msg), made when asked and not kept: the digest hashes an entry's text once and
   * then resumes past it, so a live session holds its conversation once rather than once more as
   * canonical text (docs/decisions.md, Memory follows live sessions).
   */
  readonly text: string;
  /** estimateMessageTokens(msg) */
  readonly est: number;
}

/** Work counters, for tests that hold `build` to O(new entries). */
export interface WindowStats {
  /** Entries visited by the builder's walk. */
  walked: number;
  /** Messages rendered and serialised (memo misses). */
  rendered: number;
}

export function render(msg: NeutralMessage, stats: WindowStats): Rendered {
  stats.rendered++;
  return new RenderedMessage(Object.freeze(msg), estimateMessageTokens(msg));
}

class RenderedMessage implements Rendered {
  constructor(readonly msg: NeutralMessage, readonly est: number) {}

  get text(): string {
    return canonicalJson(this.msg);
  }
}

/** `[elided seq=N]`, or `[elided seq=A-B]` for a merged run of elided replies (window-v2). */
export function elidedText(seq: number, last = seq): string {
  return last === seq ? `[elided seq=${seq}]` : `[elided seq=${seq}-${last}]`;
}

/**
 * A folded result's one-line stand-in (window-v3): what the call was, and the result that
 * superseded it (docs/decisions.md, Folds and per-tool caps).
 */
function foldText(seq: number, label: string, failed: boolean, by: number): string {
  return failed ? `[folded seq=${seq}: failed ${label}; retried at seq=${by}]` : `[folded seq=${seq}: ${label}; newer result at seq=${by}]`;
}

/** estimateMessageTokens of the assistant placeholder for the run `first`..`last`, without rendering it. */
export function elidedRunEst(first: number, last: number): number {
  return estimateTextTokens(elidedText(first, last));
}

export function originKey(origin: Origin): string {
  return `${origin.provider}\u0000${origin.model}`;
}

/** Shared by every entry without calls or blocks: most entries have none. */
const NONE: readonly never[] = Object.freeze([]);

export class Entry {
  readonly seq: number;
  readonly source: NeutralMessage;
  /** A head system message appended under the `append` policy. */
  readonly headSystem: boolean;
  /**
   * Set when an event after this entry changed what came before it (an elision, a summary, a
   * system or catalog change): its opaque blocks no longer match their prefix and stay out.
   */
  stale = false;
  #answers: ToolCall | undefined;
  #failed: boolean | undefined;
  /** The two renderings every entry may need, in slots of their own: most entries need no other. */
  #plain: Rendered | undefined;
  #elided: Rendered | undefined;
  /** The others (with blocks, with some calls, folded), by key, made when first asked. */
  #variants: Map<string, Rendered> | undefined;
  /**
   * The merged placeholder of the run this entry starts (window-v2). One slot: a run changes only
   * at a trim, and every later request shows only its newest extent.
   */
  #run: { last: number; r: Rendered } | undefined;

  constructor(seq: number, source: NeutralMessage, headSystem = false) {
    this.seq = seq;
    this.source = source;
    this.headSystem = headSystem;
  }

  get role(): NeutralMessage['role'] {
    return this.source.role;
  }

  get calls(): readonly ToolCall[] {
    return this.source.role === 'assistant' ? (this.source.tool_calls ?? NONE) : NONE;
  }

  get blocks(): readonly OpaqueBlock[] {
    return this.source.role === 'assistant' ? (this.source.blocks ?? NONE) : NONE;
  }

  /**
   * The entry as the log holds it: a tool result capped (at `capOf(this)`, asked only when it is
   * rendered), an assistant with every call, no blocks.
   */
  plain(capOf: (e: Entry) => number, stats: WindowStats): Rendered {
    this.#plain ??= render(this.#plainMessage(capOf), stats);
    return this.#plain;
  }

  /** `[elided seq=N]` in place: a tool result keeps its call id; an assistant loses everything else. */
  elided(stats: WindowStats): Rendered {
    if (this.#elided === undefined) {
      const src = this.source;
      const msg: NeutralMessage = src.role === 'tool' ? { role: 'tool', tool_call_id: src.tool_call_id, content: elidedText(this.seq) } : { role: 'assistant', content: elidedText(this.seq) };
      this.#elided = render(msg, stats);
    }
    return this.#elided;
  }

  /** A tool result: the call it answers, as its batch wrote it (the state pairs them as the walk does). */
  answers(call: ToolCall): void {
    this.#answers = call;
  }

  /**
   * The answered call's shape (tool-calls.ts); undefined for an orphan. Made each time it is asked
   * (when a result is rendered, and by a trim's folds), not kept: a live session holds its calls once.
   */
  get call(): CallShape | undefined {
    return this.#answers === undefined ? undefined : shapeOf(this.#answers);
  }

  /** Whether this result answers a call (the pairing is the walk's: the batch right before it, first result per id). */
  get paired(): boolean {
    return this.#answers !== undefined;
  }

  /** A tool result whose text reports a failure (tool-calls.ts). */
  get failed(): boolean {
    this.#failed ??= this.source.role === 'tool' && looksFailed(this.source.content);
    return this.#failed;
  }

  /** A tool result folded because the result with seq `by` superseded it: its one-line stand-in, call id kept. */
  folded(by: number, stats: WindowStats): Rendered {
    return this.#memo(`f${by}`, stats, () => {
      const src = this.source as ToolMessage;
      return { role: 'tool', tool_call_id: src.tool_call_id, content: foldText(this.seq, this.call?.label ?? 'tool result', this.failed, by) };
    });
  }

  /**
   * `[elided seq=A-B]`: one assistant placeholder for the run of elided replies this entry starts
   * and the entry with seq `last` ends (window-v2). A run of one is `elided()` itself.
   */
  elidedRun(last: number, stats: WindowStats): Rendered {
    if (last === this.seq) return this.elided(stats);
    if (this.#run?.last !== last) this.#run = { last, r: render({ role: 'assistant', content: elidedText(this.seq, last) }, stats) };
    return this.#run.r;
  }

  /**
   * With the blocks made by `origin`; undefined when none of its blocks came from there. A stale
   * reply (its prefix changed since) keeps only the blocks its provider does not bind to the prefix.
   */
  withBlocks(origin: Origin, key: string, stats: WindowStats, stale = false): Rendered | undefined {
    if (this.blocks.length === 0) return undefined;
    const mine = this.blocks.filter((b) => b.origin.provider === origin.provider && b.origin.model === origin.model && (!stale || b.unbound === true));
    if (mine.length === 0) return undefined;
    return this.#memo((stale ? 'u' : 'b') + key, stats, () => this.#assistant(this.calls, mine));
  }

  /**
   * With only the calls some tool result answers: providers reject an assistant tool call with no
   * result after it. Blocks stay out: they were made with the calls the model really wrote.
   */
  withCalls(answered: ReadonlySet<string>, stats: WindowStats): Rendered {
    const kept = this.calls.filter((c) => answered.has(c.id));
    return this.#memo('c' + kept.map((c) => c.id).join('\u0000'), stats, () => this.#assistant(kept, undefined));
  }

  /** A recipe changed the result cap: capped renderings are rebuilt on next use. */
  forgetCapped(): void {
    if (this.source.role === 'tool') this.#plain = undefined;
  }

  #plainMessage(capOf: (e: Entry) => number): NeutralMessage {
    const src = this.source;
    if (src.role === 'tool') return cappedResult(src, capOf(this));
    if (src.role === 'assistant') return this.#assistant(this.calls, undefined);
    return src.role === 'user' ? { role: 'user', content: src.content } : { role: 'system', content: src.content };
  }

  #assistant(calls: readonly ToolCall[], blocks: OpaqueBlock[] | undefined): AssistantMessage {
    const src = this.source as AssistantMessage;
    // A message with neither text nor calls is sent with empty text: providers refuse null there.
    const msg: AssistantMessage = { role: 'assistant', content: src.content ?? (calls.length > 0 ? null : '') };
    if (src.thinking !== undefined && src.thinking !== '') msg.thinking = src.thinking;
    if (calls.length > 0) msg.tool_calls = Object.freeze(calls.map((c) => Object.freeze({ id: c.id, name: c.name, arguments: c.arguments }))) as ToolCall[];
    if (blocks !== undefined) msg.blocks = Object.freeze(blocks.slice()) as OpaqueBlock[];
    return msg;
  }

  #memo(key: string, stats: WindowStats, make: () => NeutralMessage): Rendered {
    this.#variants ??= new Map();
    let r = this.#variants.get(key);
    if (r === undefined) {
      r = render(make(), stats);
      this.#variants.set(key, r);
    }
    return r;
  }
}

/**
 * A tool result at its cap. One over the cap keeps where the cut falls and makes its text from the
 * logged result each time `content` is read (two slices and a join, which share the logged
 * result's characters until a reader serialises them): a live session then holds its capped
 * results once, as logged, and not a second time as cut (docs/decisions.md, Memory follows live
 * sessions).
 */
function cappedResult(src: ToolMessage, cap: number): ToolMessage {
  const cut = cutOf(src.content, cap);
  return cut === undefined ? { role: 'tool', tool_call_id: src.tool_call_id, content: src.content } : new CutResult(src, cut);
}

/**
 * `content` is an enumerable own property, after `role` and `tool_call_id` as in any other
 * result, so serialisers, spreads and equality read it as a string; its getter is one function
 * shared by every instance, which keeps them on one hidden class.
 */
class CutResult implements ToolMessage {
  readonly role = 'tool';
  readonly tool_call_id: string;
  declare readonly content: string;
  readonly #source: ToolMessage;
  readonly #cut: Cut;

  static readonly #content: PropertyDescriptor = {
    enumerable: true,
    get(this: CutResult): string {
      return applyCut(this.#source.content, this.#cut);
    },
  };

  constructor(source: ToolMessage, cut: Cut) {
    this.tool_call_id = source.tool_call_id;
    this.#source = source;
    this.#cut = cut;
    Object.defineProperty(this, 'content', CutResult.#content);
  }
}
