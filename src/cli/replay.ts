/**
 * `proxy replay SESSION [--window SEQ] [--all] [--json] [--data-dir DIR]`
 *
 * Rebuilds logged requests from the log alone and prints a request only when its digest matches
 * the one logged. Without --window, verifies every request of SESSION; with --all and no SESSION,
 * every request of every session, with a progress bar. Exit 0 when all match, 1 on a mismatch,
 * 2 on a malformed, torn or missing log.
 */
import { ProxyError } from '../core/errors.js';
import type { Store } from '../store/types.js';
import { intArg, parse } from './args.js';
import { STORE_OPTIONS, STORE_USAGE, storeFromArgs, withStore } from './store-arg.js';
import { Progress } from './progress.js';
import { verifyEvents, type Rebuilt } from './verify.js';

const HELP = `usage: proxy replay SESSION [--window SEQ] [--all] [--json] ${STORE_USAGE}\n       proxy replay --all [--json] ${STORE_USAGE}`;

export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    window: { type: 'string' },
    all: { type: 'boolean' },
    json: { type: 'boolean' },
    ...STORE_OPTIONS,
  }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const session = positionals[0];
  if (session === undefined && values.all !== true) throw new ProxyError('bad_argument', { detail: `name a SESSION or pass --all\n${HELP}` });
  if (values.window !== undefined && session === undefined) throw new ProxyError('bad_argument', { detail: `--window needs a SESSION\n${HELP}` });
  const only = values.window === undefined ? undefined : intArg('--window', values.window);
  return withStore(await storeFromArgs(values), (store) => replay(store, session, only, values.json === true));
}

async function replay(store: Store, session: string | undefined, only: number | undefined, json: boolean): Promise<number> {
  const sessions = session === undefined ? await store.listSessions() : [session];
  const loaded = [];
  for (const id of sessions) {
    const file = store.file(id);
    if (!(await store.exists(id))) throw new ProxyError('session_not_found', { session: id, file });
    const log = await store.read(id);
    if (log.torn !== undefined) {
      throw new ProxyError('log_malformed', {
        file, line: log.torn.line,
        detail: `torn last line (${log.torn.bytes} bytes, a write cut short); the store repairs it when the proxy next opens the session`,
      });
    }
    loaded.push({ id, file, events: log.events });
  }

  const total = loaded.reduce((n, s) => n + s.events.filter((e) => e.type === 'llm.req').length, 0);
  const progress = only === undefined && !json ? new Progress(total, 'replay') : undefined;
  const results: Array<Rebuilt & { session: string }> = [];
  for (const s of loaded) {
    verifyEvents(s.events, {
      file: s.file,
      only,
      onRequest: (r) => {
        results.push({ ...r, session: s.id });
        progress?.tick();
      },
    });
  }
  progress?.end();

  const failed = results.filter((r) => !r.ok);
  if (json) {
    const rows = results.map((r) => ({
      session: r.session, seq: r.seq, ok: r.ok, digest: r.digest, recorded: r.recorded,
      ...(r.problem === undefined ? {} : { problem: r.problem }),
      ...(only !== undefined && r.ok ? { request: r.request } : {}),
    }));
    process.stdout.write(JSON.stringify(only === undefined ? { requests: rows.length, failed: failed.length, results: rows } : rows[0], null, 2) + '\n');
  } else if (only !== undefined) {
    const r = results[0]!;
    if (r.ok) process.stdout.write(JSON.stringify(r.request, null, 2) + '\n');
  } else {
    process.stdout.write(`${results.length - failed.length} of ${results.length} requests in ${loaded.length} session(s) match their digests\n`);
  }
  for (const r of failed) {
    const file = store.file(r.session);
    process.stderr.write(`proxy: ${file}:${r.line}: request seq ${r.seq}: ${r.problem ?? 'mismatch'}\n`);
  }
  return failed.length === 0 ? 0 : 1;
}
