/**
 * The proxy's own compaction prompt. A client that asks the Responses API to compact its
 * conversation (a `compaction_trigger` item, Codex's remote compaction, or `POST
 * /v1/responses/compact`) gets this prompt as the request's last user message (src/dialects/openai-responses/compaction.ts), and the session
 * layer knows the request by it as a side request on the conversation's prefix (src/session/side.ts),
 * so that the summary reads the conversation's cached prefix
 * (docs/decisions/0033-compaction-triggers-answered-by-the-proxy.md).
 */

/** The prompt's first sentence: what the side rule recognises. */
export const COMPACTION_PROMPT_MARKER = 'Compact this conversation so that the work can go on in a fresh context window.';

export const COMPACTION_PROMPT = `${COMPACTION_PROMPT_MARKER}
Write a summary that another model can continue from without the conversation above: the user's
goal and every request they made, what has been done and found (files, commands, results, errors),
the decisions taken and why, what remains to do, and the next step. Be specific: keep names, paths
and values exactly. Do not call any tool. Reply with the summary only.`;
