import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { differenceAsLogged, firstDifference, type WindowResult } from '../../src/window/index.js';
import { ORIGIN_B } from './gen-session.js';
import { LogBuilder, TOOL } from './log-builder.js';

/** Events logged after request `a` and before request `b`. */
function between(log: LogBuilder, a: { seq: number }, b: { seq: number }): LogEvent[] {
  return log.events.filter((e) => e.seq > a.seq && e.seq < b.seq);
}

function pair(setup: (log: LogBuilder) => void, change: (log: LogBuilder) => void, recipe = {}) {
  const log = new LogBuilder(recipe, { system: 'sys', tools: [TOOL] });
  setup(log);
  const a = log.send();
  change(log);
  const b: WindowResult & { seq: number } = log.send();
  return { a, b, diff: firstDifference(a.request, b.request, between(log, a, b)) };
}

const basic = (log: LogBuilder) => {
  log.user('u1');
  log.reply({ blocks: true, calls: ['c1'] });
  log.tool('c1', 'r1');
  log.reply({ content: 'r' });
  log.user('u2');
};

describe('firstDifference', () => {
  it('none: the later request extends the earlier one', () => {
    const { a, diff } = pair(basic, (log) => {
      log.reply({ content: 'more' });
      log.user('u3');
    });
    expect(diff).toEqual({ index: a.request.messages.length, field: 'messages', cause: 'none' });
  });

  it('trim: a tool result that became its fold\'s stand-in (window-v3), not a look-alike in a rewrite', () => {
    const a = { messages: [{ role: 'tool' as const, tool_call_id: 'c', content: 'file text' }], model: 'm', params: {}, tools: [] };
    const folded = { ...a, messages: [{ role: 'tool' as const, tool_call_id: 'c', content: '[folded seq=4: Read a.ts; newer result at seq=9]' }] };
    expect(firstDifference(a, folded)).toEqual({ index: 0, field: 'messages[0].content', cause: 'trim' });
    const user = { ...a, messages: [{ role: 'user' as const, content: 'x' }] };
    const lookalike = { ...a, messages: [{ role: 'user' as const, content: '[folded seq=4: Read a.ts; newer result at seq=9]' }] };
    expect(firstDifference(user, lookalike)?.cause).toBe('client_rewrite');
  });

  it('undefined for equal requests', () => {
    const { diff } = pair(basic, () => undefined);
    expect(diff).toBeUndefined();
  });

  it('trim: a message became a placeholder', () => {
    const { b, diff } = pair(basic, (log) => {
      log.reply({ content: 'x'.repeat(1500) });
      log.user('y'.repeat(1500));
    }, { high_water: 700, low_water: 400, protected_entries: 2 });
    expect(b.trimmed).toBe(true);
    expect(diff).toEqual({ index: 2, field: 'messages[2].content', cause: 'trim' });
  });

  it('trim: a run of placeholders grew to name a later reply (window-v2)', () => {
    const rounds = (log: LogBuilder, from: number, to: number) => {
      for (let i = from; i < to; i++) {
        log.reply({ calls: [`c${i}`], content: `step ${i}` });
        log.tool(`c${i}`, 'r'.repeat(300));
      }
    };
    const { a, b, diff } = pair(
      (log) => {
        log.user('task');
        rounds(log, 0, 8);
        log.send();
      },
      (log) => rounds(log, 8, 14),
      { version: 'window-v2', high_water: 700, low_water: 100, max_result_tokens: 10_000, protected_entries: 2 },
    );
    expect(b.trimmed).toBe(true);
    expect(a.request.messages[2]!.content).toMatch(/^\[elided seq=\d+-\d+\]$/);
    expect(b.request.messages[2]!.content).toMatch(/^\[elided seq=\d+-\d+\]$/);
    expect(diff).toEqual({ index: 2, field: 'messages[2].content', cause: 'trim' });
  });

  it('client_rewrite: a run that grew by resent entries which come back elided (window-v2)', () => {
    const seqs: number[] = [];
    const { a, b, diff } = pair(
      (log) => {
        log.user('u1');
        seqs.push(log.reply({ content: 'one' }), log.reply({ content: 'two' }));
        log.user('u2');
        log.add({ type: 'llm.req', digest: 'x', recipe_version: 'window-v2', route: 'r', model: 'm', origin: log.origin, params: {}, elided: seqs, est_tokens: 0 });
      },
      (log) => {
        log.add({ type: 'client.rewrite', from_seq: seqs[1]! });
        seqs.push(log.add({ type: 'client.msg', msg: { role: 'assistant', content: 'two' }, elided_as: seqs[1]! }).seq);
        log.user('u2, edited');
      },
      { version: 'window-v2' },
    );
    expect(a.request.messages[2]!.content).toBe(`[elided seq=${seqs[0]}-${seqs[1]}]`);
    expect(b.request.messages[2]!.content).toBe(`[elided seq=${seqs[0]}-${seqs[2]}]`);
    expect(diff).toEqual({ index: 2, field: 'messages[2].content', cause: 'client_rewrite' });
  });

  it('system: the leading prompt changed', () => {
    const { diff } = pair(basic, (log) => log.system('sys v2'));
    expect(diff).toEqual({ index: 0, field: 'messages[0].content', cause: 'system' });
  });

  it('tools: another catalog', () => {
    const { diff } = pair(basic, (log) => log.add({ type: 'catalog', tools: [TOOL, { type: 'function', function: { name: 'x' } }] }));
    expect(diff).toEqual({ index: -1, field: 'tools', cause: 'tools' });
  });

  it('client_rewrite: a rewrite came in between', () => {
    const { diff } = pair(basic, (log) => {
      log.add({ type: 'client.rewrite', from_seq: log.events.find((e) => e.type === 'llm.resp')!.seq });
      log.user('again');
    });
    // The reply at 2 left; the new user message stands there.
    expect(diff).toEqual({ index: 2, field: 'messages[2].role', cause: 'client_rewrite' });
  });

  it('summary: a summary came in between', () => {
    const { diff } = pair(
      (log) => {
        basic(log);
        log.reply({ content: 'r2' });
        log.user('u3');
      },
      (log) => log.add({ type: 'summary.add', from: 4, to: 7, text: 'S', source_digest: 'd' }),
    );
    expect(diff).toMatchObject({ index: 1, cause: 'summary' });
  });

  it('model_switch: another model, or the same one without the blocks of another origin', () => {
    const log = new LogBuilder({}, { system: 'sys' });
    basic(log);
    const a = log.send();
    const other = log.peek(ORIGIN_B);
    expect(firstDifference(a.request, other.request)).toEqual({ index: -1, field: 'model', cause: 'model_switch' });
    const sameModel = log.peek({ provider: 'elsewhere', model: a.request.model });
    expect(firstDifference(a.request, sameModel.request)).toEqual({ index: 2, field: 'messages[2].blocks', cause: 'model_switch' });
  });

  it('params: same messages, other parameters a cache depends on', () => {
    const { diff } = pair(basic, (log) => {
      log.params = { tool_choice: 'required' };
    });
    expect(diff).toEqual({ index: -1, field: 'params', cause: 'params' });
  });

  it('sampling parameters alone are no break: the output limit, temperature, stop', () => {
    const same = pair(basic, (log) => {
      log.params = { max_tokens: 512, temperature: 1, stop: ['END'] };
    });
    expect(same.diff).toEqual({ index: -1, field: 'params', cause: 'none' });
    // A conversation that grows while its client lowers max_tokens to what its context has left.
    const log = new LogBuilder({}, { system: 'sys' });
    basic(log);
    log.params = { max_tokens: 400 };
    const a = log.send();
    log.user('next');
    log.params = { max_tokens: 300 };
    const b = log.send();
    expect(firstDifference(a.request, b.request)).toEqual({ index: a.request.messages.length, field: 'messages', cause: 'none' });
    // On a wire that keys its cache on the output limit (Anthropic's thinking budget follows it), it is a break.
    expect(firstDifference(a.request, b.request, [], { keyed: ['max_tokens'] })).toEqual({ index: -1, field: 'params', cause: 'params' });
    // A reader of the log takes the cause the proxy recorded when it sent the request.
    expect(differenceAsLogged(a.request, b.request, [], 'params')).toEqual({ index: -1, field: 'params', cause: 'params' });
    expect(differenceAsLogged(a.request, b.request, [], 'none')).toEqual({ index: a.request.messages.length, field: 'messages', cause: 'none' });
    // With a parameter a cache depends on beside it, the break is the parameters'.
    log.user('and more');
    log.params = { max_tokens: 200, reasoning_effort: 'high' };
    const c = log.send();
    expect(firstDifference(b.request, c.request)).toEqual({ index: -1, field: 'params', cause: 'params' });
  });
});
