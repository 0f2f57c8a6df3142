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
// only (9,568 tokens, 79.5%): no cached entry ends at the opening until that trim writes one (the
// simulator, like the API, writes a breakpoint's prefix only past what the request read, and the
// requests before it read past the opening; docs/decisions/0003).
const FIRST_TRIM = 'the opening is first written at the first trim: that trim reads tools and system only (79.5% of the head)';

longSessionSuite('claude-code', { known: { head: FIRST_TRIM } });
