/**
 * `proxy serve [--config PATH] [--port N] [--host H] [--data-dir DIR]`: load config, start the
 * built-in simulator when a route uses it, open the session store, and serve.
 */
import { pino } from 'pino';
import { loadConfig } from '../config/load.js';
import { withSimulator } from '../config/routes.js';
import { inspectorAudience } from '../inspector/access.js';
import { startProxy } from '../proxy/server.js';
import { createSim } from '../sim/server.js';
import { intArg, parse } from './args.js';
import { textLine } from './log-text.js';

const HELP = 'usage: proxy serve [--config PATH] [--port N] [--host H] [--data-dir DIR] [--open]';

/** The longest an operator's log line waits in the buffer. */
const FLUSH_MS = 200;

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parse(args, {
    config: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'data-dir': { type: 'string' },
    open: { type: 'boolean' },
  }, HELP);
  if (values.help === true) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  let config = loadConfig({
    path: values.config,
    env: process.env,
    overrides: {
      ...(values.port === undefined ? {} : { port: values.port === '0' ? 0 : intArg('--port', values.port) }),
      ...(values.host === undefined ? {} : { host: values.host }),
      ...(values['data-dir'] === undefined ? {} : { dataDir: values['data-dir'] }),
      ...(values.open === true ? { open: true } : {}),
    },
  });
  const sim = Object.values(config.providers).some((p) => p.builtinSim) ? await createSim({ port: 0, host: '127.0.0.1' }) : undefined;
  if (sim !== undefined) config = withSimulator(config, sim.url);
  // One JSON line per request on stdout (docs/observability.md, Logs); never a body or a credential.
  // Written asynchronously and in batches: lines wait for 4 KB of them or for FLUSH_MS, whichever
  // comes first. One write per line was ~4% of a request's CPU when stdout is a pipe (each write is
  // a trip to libuv's thread pool; bench/RESULTS.md, Peers). What is still buffered is written out
  // on exit; a process killed with SIGKILL loses at most FLUSH_MS of lines (the session log is
  // the durable record, docs/decisions.md, Durability).
  const out = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  let buffered = false;
  const flushTimer = setInterval(() => {
    if (!buffered) return;
    buffered = false;
    out.flush();
  }, FLUSH_MS);
  flushTimer.unref();
  const flush = () => {
    try {
      out.flushSync();
    } catch {
      // A closed stdout or one still busy: the lines already written stand.
    }
  };
  process.once('exit', flush);
  const write = (line: string) => {
    buffered = true;
    out.write(config.logFormat === 'text' ? textLine(line) : line);
  };
  const dest = { write };
  let proxy;
  try {
    proxy = await startProxy(config, { logger: pino({ level: config.logLevel, base: { service: 'prefix-proxy' } }, dest) });
  } catch (err) {
    // Nothing may hold the process up after a failed start (the built-in simulator listens): it
    // exits with the error, and whatever supervises it can start it again.
    await sim?.close();
    clearInterval(flushTimer);
    flush();
    throw err;
  }
  process.stdout.write(`${config.describe()}\n\nprefix-proxy listening on ${proxy.url}/v1\n`);
  process.stdout.write(`inspector at ${proxy.url}/ui/ (${inspectorAudience(config.auth.keys, config.adminKey)}), metrics at ${proxy.url}/metrics\n`);
  if (sim !== undefined) process.stdout.write(`built-in simulator at ${sim.url} (models sim/<any-name>)\n`);
  process.stdout.write('add a provider: export OPENAI_API_KEY=... (or OPENROUTER_API_KEY, ...), or copy config.example.toml to config.toml\n');

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // SIGTERM (a rolling deploy, docs/scaling.md, Drains): streams in flight finish first, within
  // drain_seconds; a second signal stops at once. SIGINT (a terminal's ^C) stops at once.
  if (signal === 'SIGTERM') {
    const now = () => proxy.drain(0);
    process.once('SIGTERM', () => void now());
    process.once('SIGINT', () => void now());
    const { waited, cut } = await proxy.drain();
    process.stderr.write(`prefix-proxy: drained ${waited} request(s) in flight${cut > 0 ? `; ${cut} still running after drain_seconds were cut` : ''}\n`);
  }
  await proxy.close();
  await sim?.close();
  clearInterval(flushTimer);
  flush();
  return 0;
}
