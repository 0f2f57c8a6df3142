/** A headline figure: its label, its text, and its raw value in `data-value` for the tests. */
import type { ComponentChildren } from 'preact';

export function Figures({ label, children }: { label: string; children: ComponentChildren }) {
  return <dl class="figures" aria-label={label}>{children}</dl>;
}

export function Figure({ label, testid, value, text, note }: { label: string; testid: string; value: number | null | undefined; text: string; note?: string }) {
  return (
    <div class="figure">
      <dt>{label}</dt>
      <dd data-testid={testid} data-value={value === null || value === undefined ? 'null' : String(value)}>{text}</dd>
      {note !== undefined && <dd class="note">{note}</dd>}
    </div>
  );
}
