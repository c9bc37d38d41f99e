// Plain-text tables for a terminal: columns padded to their widest cell, numbers aligned right, so that a reader's
// eye runs down a column. Scripts read --json instead; nothing here is meant to be parsed. Every cell is made
// printable (printable.ts): a cell comes from the database, and may hold a terminal's escape sequences.
import { printable } from './printable.js';

/** A column: its header, and whether its cells align right (numbers). */
export interface Column {
  header: string;
  right?: boolean;
}

/** The rows under their headers, columns two spaces apart; no trailing spaces; control characters escaped. */
export function formatTable(columns: readonly Column[], given: readonly (readonly string[])[]): string {
  const rows = given.map((r) => r.map(printable));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    columns
      .map((c, i) => {
        const cell = cells[i] ?? '';
        return c.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].join('\n') + '\n';
}

/** A time in UTC to the second (`2025-03-01 14:05:09Z`), or `-` for none. */
export function formatTime(time: Date | null): string {
  if (!time) return '-';
  return time
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** A duration in its two largest units (`45s`, `3m05s`, `2h07m`, `4d03h`); `-` for none. */
export function formatSeconds(seconds: number): string {
  if (!(seconds > 0)) return '-';
  const s = Math.floor(seconds);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor((s % 86_400) / 3600))}h`;
}

/**
 * `text` on one line (line breaks and runs of blanks as one space, other control characters escaped), cut to `max`
 * characters with an ellipsis.
 */
export function oneLine(text: string, max: number): string {
  const flat = printable(text.replace(/\s+/g, ' ').trim());
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
