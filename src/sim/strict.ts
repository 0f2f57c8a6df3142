/**
 * Conversation rules a strict upstream enforces, each a 400 naming the message at fault:
 * every tool result answers a pending call of the assistant message before it; every call is
 * answered before the next non-tool message (or the end); and the mode's reasoning-field rules
 * (Cerebras rejects `reasoning_content`; DeepSeek requires it on tool-call turns).
 */
import { invalidRequest, SimError } from './errors.js';
import type { ModeSpec } from './modes.js';
import { toolCallsOf, type WireMessage } from './request.js';

export function checkConversation(messages: readonly WireMessage[], mode: ModeSpec): void {
  /** Calls of the latest assistant message not answered yet, and where that message stands. */
  let pending = new Set<string>();
  let caller = -1;

  messages.forEach((msg, i) => {
    if (mode.rejectsReasoningContent && 'reasoning_content' in msg) {
      // Cerebras' body, as clients have reported it.
      const where = `messages.${i}.${msg.role}.reasoning_content`;
      throw new SimError(400, 'wrong_api_format', `${where}: property '${where}' is unsupported`, 'validation_error');
    }
    if (msg.role === 'tool') {
      const id = msg.tool_call_id;
      if (typeof id !== 'string' || !pending.delete(id)) {
        throw invalidRequest(
          `messages[${i}] is a tool result for tool_call_id ${JSON.stringify(id)}, which answers no pending tool call of an earlier assistant message (orphaned tool result).`,
          `messages.[${i}].tool_call_id`,
          'orphan_tool_result',
        );
      }
      return;
    }
    if (pending.size > 0) throw unanswered(caller, pending, `before messages[${i}]`);
    if (msg.role !== 'assistant') return;
    const calls = toolCallsOf(msg, i);
    if (calls.length === 0) return;
    if (mode.requiresReasoningOnToolTurns && typeof msg.reasoning_content !== 'string') {
      // DeepSeek's observed text (its thinking-mode guide requires the field on tool-call turns).
      throw invalidRequest(
        `The \`reasoning_content\` in the thinking mode must be passed back to the API (messages[${i}] has tool_calls and no reasoning_content).`,
        `messages.[${i}].reasoning_content`,
        'missing_reasoning_content',
      );
    }
    pending = new Set(calls.map((call) => call.id));
    caller = i;
  });
  if (pending.size > 0) throw unanswered(caller, pending, 'before the end of the messages');
}

function unanswered(caller: number, pending: Set<string>, where: string): SimError {
  return invalidRequest(
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. messages[${caller}] has calls without results ${where}: ${[...pending].join(', ')}.`,
    `messages.[${caller}].tool_calls`,
    'unanswered_tool_calls',
  );
}
