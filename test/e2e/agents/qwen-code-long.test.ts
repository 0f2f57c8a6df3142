/**
 * Issue 29, "Must show": the real qwen-code (pinned in package.json), headless and offline, through
 * the proxy on a chat-completions route (generic preset) for tool steps that each read a ~6 KB
 * file, on a route whose window trims several times (long-session.ts has the workspace, the spawn
 * and the measures).
 *
 * 90 steps rather than 42: qwen-code clears old tool results itself ("[Old tool result content
 * cleared]", its microcompaction) once its tool results pass 500,000 characters, its default; 42
 * steps of ~6 KB stay under that, 90 pass it near step 83, as a user deep in a session would.
 */
import { longSessionSuite } from './long-session.js';

longSessionSuite('qwen-code', { steps: 90, clientClears: true });

// The same agent with its clearing line lowered to 100,000 characters of tool results (its
// setting `context.clearContextOnIdle.toolResultsTotalCharsThreshold`): it clears every ~8 steps,
// down to half, keeping the 5 newest, so that it clears results the window still shows (issue 29,
// item 3: one client-side clearing should cost at most one break).
longSessionSuite('qwen-code', {
  label: 'clearing at 100,000 characters',
  steps: 42,
  clientClears: true,
  settings: { context: { clearContextOnIdle: { toolResultsTotalCharsThreshold: 100_000 } } },
});
