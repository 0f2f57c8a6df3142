/**
 * Where explicit cache breakpoints go when an upstream does not take a top-level
 * `cache_control` (docs/decisions.md, Anthropic caches only when asked): the end of the stable
 * history first (the last user, tool-result or inline system message, which the next request keeps
 * whole), then the system prompt's end, then the tools' end, then the end of the opening (the messages before the first reply). Never more than four markers, counting the client's own.
 */
import type { NeutralRequest } from '../core/types.js';

export const MAX_BREAKPOINTS = 4;

export interface BreakpointPlan {
  /** Index in `messages` of the last user or tool message, marked at its end. */
  history?: number;
  /** Mark the end of the leading system prompt. */
  system: boolean;
  /** Mark the end of the tool definitions. */
  tools: boolean;
  /**
   * Index in `messages` of the last message before the first reply (the first user message and
   * any system message the client put after it), marked at its end when history follows: a trim
   * leaves the head up to there unchanged, and an agent's opening is large (Claude Code's ~10 KB of
   * reminders and its environment text), so a read that stops at the system prompt loses it
   * (docs/decisions/0003).
   */
  first?: number;
  /** Markers this plan places. */
  count: number;
}

export function planBreakpoints(request: NeutralRequest, clientMarkers = 0): BreakpointPlan {
  let room = Math.max(0, MAX_BREAKPOINTS - clientMarkers);
  const plan: BreakpointPlan = { system: false, tools: false, count: 0 };
  let history: number | undefined;
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const role = request.messages[i]?.role;
    // An inline system message after the history (Claude Code's environment text) is kept by the
    // next request like the rest: the marker goes after it, or the next request reads short of it.
    if (role === 'user' || role === 'tool' || (role === 'system' && i > 0)) {
      history = i;
      break;
    }
  }
  if (history !== undefined && room > 0) {
    plan.history = history;
    room--;
  }
  // A marker at the system prompt's end is only worth one when messages follow it.
  if (request.messages[0]?.role === 'system' && history !== undefined && history > 0 && room > 0) {
    plan.system = true;
    room--;
  }
  if (request.tools.length > 0 && room > 0) {
    plan.tools = true;
    room--;
  }
  // The opening ends before the first reply; the leading system prompt alone is marked above.
  const first = request.messages.findIndex((m) => m.role === 'assistant') - 1;
  const opening = first > 0 || (first === 0 && request.messages[0]!.role !== 'system');
  if (opening && history !== undefined && first < history && room > 0) plan.first = first;
  plan.count = (plan.history === undefined ? 0 : 1) + (plan.system ? 1 : 0) + (plan.tools ? 1 : 0) + (plan.first === undefined ? 0 : 1);
  return plan;
}
