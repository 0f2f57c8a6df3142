/**
 * Issue 29, "Must show": the real qwen-code (pinned in package.json), headless and offline, through the
 * proxy for 42 tool steps that each read a ~6 KB file, on a route whose window trims several times
 * (long-session.ts has the workspace, the spawn and the measures).
 */
import { longSessionSuite } from './long-session.js';

longSessionSuite('qwen-code');
