/**
 * Anthropic's models with preserved thinking run a prefix check on every thinking block sent back:
 * the block's signature binds it to the system prompt, tools and messages before it, so a block
 * after an edit of that prefix is invalid, and the API answers a 400 unless the request asks it to
 * drop such blocks instead (`thinking.block_binding.prefix_mismatch_behavior = "drop_block"`,
 * beta `thinking-binding-controls-2026-08-01`). The documented list: Claude Fable and Mythos 5.1
 * and later, Claude Opus, Sonnet and Haiku 5.5 and later
 * (https://platform.claude.com/docs/build-with-claude/preserved-thinking/prefix-checks). Later
 * major versions are taken to keep it. docs/decisions/0009-stale-thinking-dropped-by-the-api.md.
 */

/** `claude-<family>-<major>-<minor>`, with or without an `org/` or `anthropic.` prefix and a date suffix. */
const NAME = /^(?:.*[/.])?claude-(fable|mythos|opus|sonnet|haiku)-(\d+)-(\d+)(?:[-@]|$)/i;

/** The first version of each family that runs the check. */
const SINCE: Record<string, [number, number]> = { fable: [5, 1], mythos: [5, 1], opus: [5, 5], sonnet: [5, 5], haiku: [5, 5] };

export function bindsThinkingToPrefix(model: string): boolean {
  const m = NAME.exec(model);
  if (m === null) return false;
  const [major, minor] = [Number(m[2]), Number(m[3])];
  const [fromMajor, fromMinor] = SINCE[m[1]!.toLowerCase()]!;
  return major > fromMajor || (major === fromMajor && minor >= fromMinor);
}
