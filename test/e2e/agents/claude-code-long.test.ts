/**
 * Issue 29, "Must show": the real Claude Code (pinned in package.json), headless and offline,
 * through the proxy on the Anthropic wire (the anthropic preset's defaults) for 42 tool steps that
 * each read a ~6 KB file, on a route whose window trims several times (long-session.ts has the
 * workspace, the spawn and the measures).
 */
import { longSessionSuite } from './long-session.js';

// With the preset's breakpoints (tools, system, the opening before the first reply, the end of the
// history) every trim after the first reads the whole unchanged head (12,053 of 12,032 tokens) and
// the session 0.9975 of what the unchanged prefix allows. The first trim reads the tools and system
// only (9,568 tokens, 79.5%): that trim drops the signed thinking of the replies after what it
// elides (their signatures bind the old prefix), so the loop's last reply has none and the request
// must go without thinking (the API's final-thinking-block rule); and a change of thinking
// settings invalidates every cached message block, as Anthropic's caching page says and the
// simulator plays it. The tools and system, cached apart from the messages, are what is left.
// Thinking stays off for the rest of the loop, so later trims read the whole head.
const FIRST_TRIM = 'the first trim turns thinking off (its last reply lost its signed block), which invalidates the cached message blocks: it reads tools and system only (79.5%)';

longSessionSuite('claude-code', { known: { head: FIRST_TRIM } });
