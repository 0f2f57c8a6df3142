/**
 * `proxy diff SESSION SEQ [--json] [--data-dir DIR]`: rebuild request SEQ and the session's request
 * before it, and name the first difference (message index and field) and its cause.
 */
import { ProxyError } from '../core/errors.js';
import type { EventOf } from '../core/events.js';
import { differenceAsLogged } from '../window/index.js';
import { intArg, parse } from './args.js';
import { STORE_OPTIONS, STORE_USAGE, storeFromArgs, withStore } from './store-arg.js';
import { verifyEvents } from './verify.js';

const HELP = `usage: proxy diff SESSION SEQ [--json] ${STORE_USAGE}`;

export async function diffCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, ...STORE_OPTIONS }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const [session, seqArg] = positionals;
  if (session === undefined) throw new ProxyError('bad_argument', { detail: `name a SESSION\n${HELP}` });
  const seq = intArg('SEQ', seqArg);
  const { file, events } = await withStore(await storeFromArgs(values), async (store) => {
    const where = store.file(session);
    if (!(await store.exists(session))) throw new ProxyError('session_not_found', { session, file: where });
    return { file: where, events: (await store.read(session)).events };
  });

  const requests = verifyEvents(events, { file, only: undefined }).filter((r) => r.seq <= seq);
  const next = requests.at(-1);
  if (next?.seq !== seq) throw new ProxyError('bad_argument', { detail: `${file}: seq ${seq} is not a logged request (llm.req)` });
  const prev = requests.at(-2);
  const between = events.filter((e) => prev !== undefined && e.seq > prev.seq && e.seq < seq);
  const logged = events.find((e): e is EventOf<'llm.req'> => e.type === 'llm.req' && e.seq === seq)?.cause;
  const diff = prev === undefined ? undefined : differenceAsLogged(prev.request, next.request, between, logged);

  const report = prev === undefined
    ? { seq, previous: null, cause: 'first', index: null, field: null }
    : { seq, previous: prev.seq, cause: diff?.cause ?? 'none', index: diff?.index ?? null, field: diff?.field ?? null };
  if (values.json === true) {
    process.stdout.write(JSON.stringify(report) + '\n');
  } else if (prev === undefined) {
    process.stdout.write(`request ${seq} is the session's first: no predecessor (cause: first)\n`);
  } else if (diff === undefined || diff.cause === 'none') {
    process.stdout.write(`request ${seq} extends request ${prev.seq}: its messages start with all of ${prev.seq}'s (cause: none)\n`);
  } else {
    process.stdout.write(`request ${seq} vs ${prev.seq}: first difference at ${diff.field} (message ${diff.index}); cause: ${diff.cause}\n`);
  }
  if (!next.ok || (prev !== undefined && !prev.ok)) {
    process.stderr.write(`proxy: ${file}: warning: a rebuilt request does not match its recorded digest; run proxy replay ${session}\n`);
    return 1;
  }
  return 0;
}
