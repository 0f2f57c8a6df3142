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
import { LogStore } from '../log/store.js';
import { dataDirArg, intArg, parse } from './args.js';

const HELP = 'usage: proxy summary add SESSION --from SEQ --to SEQ --file FILE [--data-dir DIR]\n       proxy summary revoke SESSION SEQ [--data-dir DIR]';

export async function summaryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    from: { type: 'string' },
    to: { type: 'string' },
    file: { type: 'string' },
    'data-dir': { type: 'string' },
  }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const [action, session, seqArg] = positionals;
  if ((action !== 'add' && action !== 'revoke') || session === undefined) {
    throw new ProxyError('bad_argument', { detail: HELP });
  }
  const store = new LogStore(dataDirArg(values['data-dir']));
  if (!(await store.exists(session))) throw new ProxyError('session_not_found', { session, file: store.file(session) });
  const log = await store.open(session, { create: false });
  try {
    const events = log.events;
    const body = action === 'add'
      ? await summaryAdd(log.file, events, intArg('--from', values.from), intArg('--to', values.to), values.file)
      : summaryRevoke(log.file, events, intArg('SEQ', seqArg));
    const written = log.append(body, new Date().toISOString());
    await log.sync();
    process.stdout.write(`${log.file}: wrote ${written.type} at seq ${written.seq}\n`);
    return 0;
  } finally {
    await log.close();
  }
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
