/** Argument parsing shared by the subcommands: node's parseArgs with errors as ProxyErrors. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ProxyError } from '../core/errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<T extends Options>(args: string[], options: T, help: string) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new ProxyError('bad_argument', { detail: `${(err as Error).message}\n${help}` });
  }
}

/** A positive integer option or positional, or a clear error naming it. */
export function intArg(name: string, value: string | undefined): number {
  if (value === undefined || !/^\d+$/.test(value)) {
    throw new ProxyError('bad_argument', { detail: `${name} must be a positive integer, got ${value === undefined ? 'nothing' : JSON.stringify(value)}` });
  }
  return Number(value);
}

export function dataDirArg(value: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return value ?? env['PROXY_DATA_DIR'] ?? './data';
}
