/**
 * The window room: log events -> the next upstream request (docs/how-it-works.md, The window;
 * docs/decisions.md). Pure: no I/O, no clock.
 *
 * window-v1 choices beyond docs/decisions.md (each explained where it is made):
 * - aborted replies and errors are not in the window (state.ts);
 * - a batch sends only its answered calls; all dropped and no text -> content '' (walk.ts);
 * - a summary's span is clipped once, when added, to stay out of the latest two user turns;
 *   a newer overlapping summary supersedes an older one (summaries.ts);
 * - blocks go stale on any change before their reply: elision, summary add/revoke, and also a
 *   replaced system prompt, a changed catalog or a changed result cap (state.ts);
 * - the trim's running estimate ignores the blocks that go stale, so it may trim a little more
 *   than needed, never less (trim.ts).
 *
 * window-v2 differs only in that adjacent elided replies are one placeholder, `[elided seq=A-B]`
 * (walk.ts, trim.ts; docs/decisions.md, Placeholders that do not pile up).
 *
 * window-v3 adds per-tool result caps, a whole-file read at twice its cap (tool-caps.ts,
 * tool-calls.ts), and folds of superseded results on requests that trim (folds.ts; docs/decisions.md,
 * Folds and per-tool caps).
 *
 * window-v4 takes the tool results a client cleared itself as elisions it made (the next trim
 * elides them first), and a fold's stand-in leaves with its successor (trim.ts, folds.ts;
 * docs/decisions/0005-client-clearing.md).
 */
export { WindowState, type WindowInput, type WindowResult } from './state.js';
export { foldEvents, buildAt, windowInputOf } from './replay.js';
export { StartTracker, type StartPoint, type EventPosition } from './tracker.js';
export { differenceAsLogged, firstDifference, type Difference } from './diff.js';
export { UnknownRecipeVersionError, checkRecipe, isKnownVersion, rulesOf } from './recipe.js';
export { capToolResult, omittedLinesMarker } from './cap.js';
export { elidedText, type WindowStats } from './entry.js';
