#!/usr/bin/env node
/**
 * `proxy`: one binary, one subcommand per job. Errors print on one line and exit non-zero:
 * 1 for a verification failure (a digest mismatch), 2 for bad input (usage, malformed log).
 */
import { isProxyError } from '../core/errors.js';

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  serve: { summary: 'run the proxy', load: async () => (await import('./serve.js')).serveCommand },
  replay: { summary: 'rebuild logged requests and verify their digests', load: async () => (await import('./replay.js')).replayCommand },
  diff: { summary: 'name the first difference between a request and its predecessor', load: async () => (await import('./diff.js')).diffCommand },
  summary: { summary: 'add or revoke a reviewed summary of a span of a session', load: async () => (await import('./summary.js')).summaryCommand },
  sim: { summary: 'run the simulated upstream', load: async () => (await import('./sim.js')).simCommand },
  sessions: { summary: 'list stored sessions: requests, tokens, token cache rate, cost; `sessions prune` removes idle ones', load: async () => (await import('./sessions.js')).sessionsCommand },
  keys: { summary: 'add, list, revoke client keys in PostgreSQL, or set their budgets, without a restart', load: async () => (await import('./keys.js')).keysCommand },
  migrate: { summary: 'move every session log between the file store and PostgreSQL, then replay every digest', load: async () => (await import('./migrate.js')).migrateCommand },
  models: { summary: 'per route: context, output reserve and prices the proxy will use, and their sources', load: async () => (await import('./models.js')).modelsCommand },
  stats: { summary: 'one session\'s requests and totals: cached, written, reuse, break causes, cost', load: async () => (await import('./stats.js')).statsCommand },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return ['usage: proxy <command> [options]', '', 'commands:', ...lines, '', 'proxy <command> --help for its options'].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (command === undefined) {
    process.stderr.write(`proxy: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  return (await command.load())(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (isProxyError(err)) {
      process.stderr.write(`proxy: ${err.message}\n`);
      process.exitCode = err.code === 'digest_mismatch' ? 1 : 2;
    } else {
      process.stderr.write(`proxy: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 2;
    }
  },
);
