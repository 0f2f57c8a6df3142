/**
 * Config errors name the file and the dotted key, e.g.
 * `config.toml: models.claude.context: expected a positive integer, got "big"`.
 * One error carries every problem found, one line each, so a file is fixed in one pass.
 */
import type * as z from 'zod';
import { ProxyError } from '../core/errors.js';

export interface ConfigProblem {
  /** Dotted key path (`models.claude.context`), or what the problem is about (`OLLAMA_HOST`). */
  key: string;
  detail: string;
}

/** A `config_invalid` ProxyError whose message lists every problem, one per line. */
export class ConfigError extends ProxyError {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];

  constructor(file: string, problems: readonly ConfigProblem[]) {
    const [first, ...rest] = problems;
    if (first === undefined) throw new TypeError('ConfigError needs at least one problem');
    const more = rest.map((p) => `\n${file}: ${p.key}: ${p.detail}`).join('');
    super('config_invalid', { file, key: first.key, detail: first.detail + more });
    this.name = 'ConfigError';
    this.file = file;
    this.problems = problems;
  }
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** `models."gpt-4.1".context`, `sessions.id_headers[2]`: keys quoted as TOML would need them. */
export function keyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') {
      out += `[${part}]`;
      continue;
    }
    const name = String(part);
    const written = BARE_KEY.test(name) ? name : JSON.stringify(name);
    out += out === '' ? written : `.${written}`;
  }
  return out === '' ? '(top level)' : out;
}

/** A found value, short enough for one line. */
export function showValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object' && value !== null) return 'a table';
  return String(value);
}

export function problemsFromIssues(issues: readonly z.core.$ZodIssue[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.push({ key: keyPath([...issue.path, key]), detail: issue.message });
      continue;
    }
    problems.push({ key: keyPath(issue.path), detail: describeIssue(issue) });
  }
  return problems;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const hasInput = 'input' in issue && issue.input !== undefined;
  if (issue.code === 'invalid_type' && !hasInput) return `missing; ${issue.message}`;
  // A bad record key: the key schema's own message is nested in the issue.
  if (issue.code === 'invalid_key') return `${issue.issues[0]?.message ?? issue.message}, got ${showValue(issue.input)}`;
  return hasInput ? `${issue.message}, got ${showValue(issue.input)}` : issue.message;
}

/** Where a TOML document failed to parse. */
export interface SyntaxProblem {
  line: number;
  column: number;
  detail: string;
}

export function syntaxError(file: string, problem: SyntaxProblem): ProxyError {
  return new ProxyError('config_syntax', { file, line: problem.line, column: problem.column, detail: problem.detail });
}
