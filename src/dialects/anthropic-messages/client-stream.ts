/**
 * StreamDeltas -> Messages SSE events, in the API's order: `message_start`, then per content block
 * `content_block_start`, its deltas (`thinking_delta` then one `signature_delta`, `text_delta`,
 * `input_json_delta`) and `content_block_stop`, then `message_delta` (stop reason, cumulative
 * usage) and `message_stop` (anthropic-sdk-typescript `messages.ts`, `RawMessageStreamEvent`).
 *
 * `message_start` waits for the first delta that is not usage, so it carries the input and cache
 * figures an Anthropic upstream sent in its own `message_start`. A thinking block streams its text
 * as it comes; the upstream's signed block (a `block` delta, at its stop) then closes it with its
 * signature, and the blank line the decoder puts before a later block's text is not shown again. A
 * signed block whose text was not streamed (`display: omitted`, an answer from the log) goes whole.
 */
import type { NeutralReply, Usage } from '../../core/types.js';
import type { ReplyMeta, StreamDelta } from '../types.js';
import { THINKING_SEPARATOR } from './decode-reply.js';
import { messageEvent, messageId, renderUsage, stopReasonFor, type WireEvent } from './client-render.js';
import { ANTHROPIC_KINDS } from './conversation.js';

type Open = { kind: 'text' } | { kind: 'thinking'; text: string } | { kind: 'tool_use'; call: number };

export interface EventRenderer {
  render(delta: StreamDelta): string;
  end(final: NeutralReply): string;
}

export function createEventRenderer(meta: ReplyMeta): EventRenderer {
  let started = false;
  let index = -1;
  let open: Open | undefined;
  /** A thinking block was shown: the decoder's separator before the next block's text is not shown again. */
  let thinkingShown = false;
  let calls = 0;
  let finish: NeutralReply['finish_reason'] = null;
  let usage: Usage | undefined;
  let out = '';

  const emit = (data: WireEvent): void => {
    out += messageEvent(data);
  };
  const start = (): void => {
    if (started) return;
    started = true;
    const message = {
      id: messageId(meta), type: 'message', role: 'assistant', model: meta.model, content: [],
      stop_reason: null, stop_sequence: null, usage: renderUsage(usage),
    };
    emit({ type: 'message_start', message });
  };
  const close = (): void => {
    if (open === undefined) return;
    emit({ type: 'content_block_stop', index });
    open = undefined;
  };
  const begin = (block: Record<string, unknown>, next: Open): void => {
    close();
    index++;
    open = next;
    emit({ type: 'content_block_start', index, content_block: block });
  };
  const delta = (d: Record<string, unknown>, at = index): void => {
    emit({ type: 'content_block_delta', index: at, delta: d });
  };
  /** The block index of each call, for arguments that come after a later block started. */
  const callBlock = new Map<number, number>();

  const signedBlock = (data: Record<string, unknown>, redacted: boolean): void => {
    if (redacted) {
      begin(data, { kind: 'text' });
      close();
      return;
    }
    const text = typeof data.thinking === 'string' ? data.thinking : '';
    const streamed = open?.kind === 'thinking' && open.text === text;
    if (!streamed) {
      begin({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking', text: '' });
      if (text !== '') delta({ type: 'thinking_delta', thinking: text });
    }
    if (typeof data.signature === 'string') delta({ type: 'signature_delta', signature: data.signature });
    close();
    thinkingShown = true;
  };

  return {
    render(d) {
      out = '';
      if (d.type === 'usage') {
        usage = d.usage;
        return out;
      }
      if (d.type === 'error' || d.type === 'finish') {
        if (d.type === 'finish') finish ??= d.reason;
        return out;
      }
      if (d.type === 'thinking' && d.text === THINKING_SEPARATOR && thinkingShown && open?.kind !== 'thinking') return out;
      start();
      switch (d.type) {
        case 'content':
          if (open?.kind !== 'text') begin({ type: 'text', text: '' }, { kind: 'text' });
          delta({ type: 'text_delta', text: d.text });
          break;
        case 'thinking':
          if (open?.kind !== 'thinking') begin({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking', text: '' });
          (open as { text: string }).text += d.text;
          thinkingShown = true;
          delta({ type: 'thinking_delta', thinking: d.text });
          break;
        case 'block':
          if (ANTHROPIC_KINDS.has(d.block.kind) && d.block.data !== null && typeof d.block.data === 'object') {
            signedBlock(d.block.data as Record<string, unknown>, d.block.kind === 'anthropic.redacted_thinking');
          }
          break;
        case 'tool_call_start':
          begin({ type: 'tool_use', id: d.id, name: d.name, input: {} }, { kind: 'tool_use', call: d.index });
          callBlock.set(d.index, index);
          calls++;
          break;
        case 'tool_call_args':
          // Arguments follow their call's start on every decoder; a late piece still names its block.
          delta({ type: 'input_json_delta', partial_json: d.text }, callBlock.get(d.index) ?? index);
          break;
      }
      return out;
    },
    end(final) {
      out = '';
      start();
      close();
      const reason = stopReasonFor(finish ?? final.finish_reason, calls > 0);
      emit({ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: renderUsage(final.usage ?? usage) });
      emit({ type: 'message_stop' });
      return out;
    },
  };
}
