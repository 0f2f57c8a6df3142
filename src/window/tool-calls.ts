/**
 * What a tool call was, as far as folds and per-tool caps need to know (docs/decisions.md, Folds
 * and per-tool caps): its target (the file it names), whether it reads a whole file, and whether
 * its result reports a failure. Read from the call's own name and arguments, in the shapes agents
 * send (docs/how-it-works.md, The window): Claude Code's `Read {file_path, offset?, limit?}`,
 * opencode's `read {filePath, offset?, limit?}`, Cline's and Roo's `read_file {path}`, and a shell
 * tool (`Bash`, Codex's `shell`/`exec_command`/`shell_command`) running `cat FILE`. Pure.
 */
import { canonicalJson } from '../core/canonical.js';
import type { ToolCall } from '../core/types.js';

export interface CallShape {
  name: string;
  /** The call as a whole: the tool's name and its arguments in canonical JSON. */
  identity: string;
  /** The file the call names, if it names one. */
  target: string | undefined;
  /** A read of a whole file: a read tool without a range, or a shell `cat` of one file. */
  wholeRead: boolean;
  /** One short line naming the call, for a fold's stand-in. */
  label: string;
}

const PATH_KEYS = ['file_path', 'filePath', 'path', 'file', 'filename', 'target_file', 'absolute_path'];
const RANGE_KEYS = ['offset', 'limit', 'start_line', 'end_line', 'line_start', 'line_end', 'view_range', 'lines', 'range', 'startLine', 'endLine'];
/** Tools that read a file by name. */
const READ_TOOL = /^(?:read|read_file|readfile|view_file|open_file)$/i;
/** Tools that run a shell command. */
const SHELL_TOOL = /^(?:bash|shell|exec_command|shell_command|run_shell_command|local_shell)$/i;
/** `cat FILE`, one file, nothing piped or joined after it. */
const CAT = /^\s*cat\s+(?:--\s+)?('[^']+'|"[^"]+"|[^\s|;&<>$`'"]+)\s*$/;
const LABEL_MAX = 80;

export function shapeOf(call: ToolCall): CallShape {
  const args = parseArgs(call.arguments);
  const identity = `${call.name}\u0000${args === undefined ? call.arguments : canonicalJson(args)}`;
  let target: string | undefined;
  let wholeRead = false;
  if (args !== undefined) {
    const key = PATH_KEYS.find((k) => typeof args[k] === 'string' && args[k] !== '');
    if (key !== undefined) target = args[key] as string;
    if (READ_TOOL.test(call.name) && target !== undefined) wholeRead = !RANGE_KEYS.some((k) => args[k] !== undefined && args[k] !== null);
    if (SHELL_TOOL.test(call.name) && target === undefined) {
      const cat = CAT.exec(commandOf(args) ?? '');
      if (cat !== null) {
        target = unquote(cat[1]!);
        wholeRead = true;
      }
    }
  }
  const what = target ?? commandOf(args ?? {}) ?? call.arguments;
  return { name: call.name, identity, target, wholeRead, label: clip(`${call.name} ${what}`) };
}

/**
 * Whether a tool result reports a failure. Results carry no error flag in the neutral request
 * (Anthropic's `is_error` is not kept), so the text's first line says: Claude Code's
 * `<tool_use_error>`, an `Error:` line (opencode and most tools), Codex's exit status line.
 */
export function looksFailed(content: string): boolean {
  const head = content.slice(0, 400);
  if (/^\s*(?:<tool_use_error>|error\b\s*[:!-]|\[error\])/i.test(head)) return true;
  return /^(?:Exit code:?|Process exited with code) *[1-9]\d*\s*$/m.test(head);
}

function parseArgs(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The command a shell tool runs: a string, or Codex's argv whose last element is the script (`["bash","-lc","cat x"]`). */
function commandOf(args: Record<string, unknown>): string | undefined {
  const c = args.command ?? args.cmd;
  if (typeof c === 'string') return c;
  if (Array.isArray(c) && c.length > 0 && c.every((x) => typeof x === 'string')) {
    return c.length >= 3 && /(?:^|\/)(?:ba|z)?sh$/.test(c[0] as string) && /^-l?c$/.test(c[1] as string) ? (c[2] as string) : c.join(' ');
  }
  return undefined;
}

function unquote(s: string): string {
  return (s.startsWith("'") && s.endsWith("'")) || (s.startsWith('"') && s.endsWith('"')) ? s.slice(1, -1) : s;
}

function clip(s: string): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length <= LABEL_MAX ? line : `${line.slice(0, LABEL_MAX - 3)}...`;
}
