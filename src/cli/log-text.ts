/**
 * `[log] format = "text"`: each of pino's JSON lines as one line a person reads in a terminal
 * (time, level, message, then the other fields as key=value, in pino's order). Pure.
 */

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields the line already shows in its head, or that every line carries alike. */
const HEAD = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

export function textLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString() : '-';
  const level = LEVELS[Number(rec.level)] ?? String(rec.level);
  const parts = [time, level, typeof rec.msg === 'string' ? rec.msg : ''];
  for (const [k, v] of Object.entries(rec)) {
    if (HEAD.has(k) || v === undefined) continue;
    parts.push(`${k}=${value(v)}`);
  }
  let line = parts.filter((p) => p !== '').join(' ');
  // An error's stack, when pino gives one, goes on the lines below, as a terminal shows it.
  const stack = (rec.err as { stack?: unknown } | undefined)?.stack;
  if (typeof stack === 'string') line += `\n${stack}`;
  return `${line}\n`;
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'object' && v !== null) {
    const err = v as { type?: unknown; message?: unknown };
    if (typeof err.message === 'string') return JSON.stringify(`${typeof err.type === 'string' ? `${err.type}: ` : ''}${err.message}`);
    return JSON.stringify(v);
  }
  return String(v);
}
