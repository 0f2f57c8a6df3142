/**
 * `proxy summary add SESSION --from SEQ --to SEQ --file F` and `proxy summary revoke SESSION SEQ`.
 *
 * A reviewed summary replaces a span of a session's conversation in later windows; revoking it
 * brings the span back. Both take the session's writer lock and go through the log's redaction.
 */
import { readFile } from 'node:fs/promises';
import { canonicalDigest } from '../core/canonical.js';
import { ProxyError } from '../core/errors.js';
import type { LogEvent } from '../core/events.js';
import { intArg, parse } from './args.js';
import { STORE_OPTIONS, STORE_USAGE, storeFromArgs, withStore } from './store-arg.js';

const HELP = `usage: proxy summary add SESSION --from SEQ --to SEQ --file FILE ${STORE_USAGE}\n       proxy summary revoke SESSION SEQ ${STORE_USAGE}`;

export async function summaryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    from: { type: 'string' },
    to: { type: 'string' },
    file: { type: 'string' },
    ...STORE_OPTIONS,
  }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const [action, session, seqArg] = positionals;
  if ((action !== 'add' && action !== 'revoke') || session === undefined) {
    throw new ProxyError('bad_argument', { detail: HELP });
  }
  return withStore(await storeFromArgs(values), async (store) => {
    const file = store.file(session);
    if (!(await store.exists(session))) throw new ProxyError('session_not_found', { session, file });
    const log = await store.open(session, { create: false });
    try {
      // A running proxy on a shared store may hold the session: wait for its turn, as a request would.
      await log.claim();
      const events = log.events;
      const body = action === 'add'
        ? await summaryAdd(file, events, intArg('--from', values.from), intArg('--to', values.to), values.file)
        : summaryRevoke(file, events, intArg('SEQ', seqArg));
      const written = log.append(body, new Date().toISOString());
      await log.sync();
      await log.unclaim();
      process.stdout.write(`${file}: wrote ${written.type} at seq ${written.seq}\n`);
      return 0;
    } finally {
      await log.close();
    }
  });
}

function isEntry(e: LogEvent): boolean {
  return (e.type === 'client.msg' && e.head !== true) || (e.type === 'llm.resp' && e.aborted !== true);
}

async function summaryAdd(file: string, events: readonly LogEvent[], from: number, to: number, textFile: string | undefined) {
  if (textFile === undefined) throw new ProxyError('bad_argument', { detail: `--file is required\n${HELP}` });
  if (from > to) throw new ProxyError('bad_argument', { detail: `--from ${from} is after --to ${to}` });
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  for (const [name, seq] of [['--from', from], ['--to', to]] as const) {
    const e = bySeq.get(seq);
    if (e === undefined || !isEntry(e)) {
      throw new ProxyError('bad_argument', { detail: `${file}: ${name} ${seq} is not a conversation entry (a client message or a reply)` });
    }
  }
  const users = events.filter((e) => e.type === 'client.msg' && e.msg.role === 'user').map((e) => e.seq);
  const keepFrom = users.length >= 2 ? users[users.length - 2]! : (users[0] ?? Infinity);
  if (to >= keepFrom) {
    throw new ProxyError('bad_argument', { detail: `${file}: the span ${from}-${to} reaches into the latest two user turns (from seq ${keepFrom}); those are never summarised` });
  }
  const text = (await readFile(textFile, 'utf8')).trim();
  if (text === '') throw new ProxyError('bad_argument', { detail: `${textFile}: the summary is empty` });
  const span = events.filter((e) => e.seq >= from && e.seq <= to);
  return { type: 'summary.add' as const, from, to, text, source_digest: canonicalDigest(span) };
}

function summaryRevoke(file: string, events: readonly LogEvent[], seq: number) {
  const target = events.find((e) => e.seq === seq);
  if (target?.type !== 'summary.add') throw new ProxyError('bad_argument', { detail: `${file}: seq ${seq} is not a summary.add` });
  if (events.some((e) => e.type === 'summary.revoke' && e.summary === seq)) {
    throw new ProxyError('bad_argument', { detail: `${file}: the summary at seq ${seq} is already revoked` });
  }
  return { type: 'summary.revoke' as const, summary: seq };
}
