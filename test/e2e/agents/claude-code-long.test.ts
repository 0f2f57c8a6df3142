/**
 * Issue 29, "Must show": the real Claude Code (pinned in package.json), headless and offline,
 * through the proxy on the Anthropic wire (the anthropic preset's defaults) for 42 tool steps that
 * each read a ~6 KB file, on a route whose window trims several times (long-session.ts has the
 * workspace, the spawn and the measures).
 */
import { longSessionSuite } from './long-session.js';

// Measured with the preset's default breakpoints (tools, system, last user/tool-result boundary):
// at each trim the cache reads the tools and system (9,568 tokens) but not Claude Code's first
// message (~2,500 tokens of system reminders and the prompt), which no breakpoint ends: 79.5% of
// the unchanged head, and 0.9855 of what the unchanged prefix allows over the session.
const FIRST_MESSAGE = 'no breakpoint at the end of the first message: the trim request reads tools and system only (issue 29, item 1)';

longSessionSuite('claude-code', { known: { head: FIRST_MESSAGE, efficiency: FIRST_MESSAGE } });
