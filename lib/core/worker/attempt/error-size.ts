// The size of one stored error, in bytes. The walk that makes a thrown value storable (storable.ts, failure.ts) bounds
// what it keeps in characters, which leaves room for up to three times as many bytes of UTF-8 (a message in CJK
// characters), and each attempt's error is written three times in a row (output.error, output.errors, last_error),
// its name, message (cut at 2,000 characters) and stack a fourth in the attempt's record (attempts, migration 18).
// This cut is in bytes, as the database stores it, applied to the record as a whole. Pure.
import { cutText, put } from './storable.js';

/** Most bytes one stored error takes, as UTF-8 JSON (docs/guide.md, "Working"). */
export const MAX_ERROR_BYTES = 32_768;

/** Fields kept when an error is cut down to MAX_ERROR_BYTES: what says what failed, beside the name and message. */
const KEPT_WHEN_CUT: readonly string[] = ['retryCount', 'code', 'status', 'statusCode', 'errno', 'syscall', 'thrown'];

/** Characters kept of a text field kept when an error is cut (KEPT_WHEN_CUT). */
const KEPT_TEXT_MAX = 200;

/** An error record as failure.ts builds it. */
type ErrorRecord = { name: string; message: string; stack?: string; [field: string]: unknown };

/** Bytes `value` takes as UTF-8 JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * `error` as it fits in `max` bytes of JSON (MAX_ERROR_BYTES): as it is when it fits (the usual case: one
 * JSON.stringify to know), else without its other fields and cause (the short ones of KEPT_WHEN_CUT stay, and `…`
 * says what was left out), then without its stack, then with its message cut to what room is left.
 */
export function fitError<E extends ErrorRecord>(error: E, max = MAX_ERROR_BYTES): E {
  if (jsonBytes(error) <= max) return error;
  const cut = { name: error.name, message: error.message } as E;
  if (error.stack !== undefined) cut.stack = error.stack;
  for (const key of KEPT_WHEN_CUT) {
    const value = error[key];
    if (typeof value === 'number' || typeof value === 'boolean') put(cut, key, value);
    else if (typeof value === 'string') put(cut, key, cutText(value, KEPT_TEXT_MAX));
  }
  put(cut, '…', `fields and cause not stored: the error took more than ${max} bytes`);
  if (jsonBytes(cut) <= max) return cut;
  delete cut.stack;
  const bytes = jsonBytes(cut);
  if (bytes <= max) return cut;
  // the room the message may take: what is left with the message empty
  cut.message = '';
  cut.message = cutBytes(error.message, max - jsonBytes(cut));
  return cut;
}

/** `text` cut (cutText) so that, written as JSON without its quotes, it takes at most `max` bytes. */
export function cutBytes(text: string, max: number): string {
  let keep = Math.min(text.length, Math.max(0, max));
  for (;;) {
    const cut = cutText(text, keep);
    const bytes = jsonBytes(cut) - 2;
    if (bytes <= max || keep === 0) return cut;
    // multi-byte characters: keep the share of the characters that fits
    keep = Math.max(0, Math.min(keep - 1, Math.floor((keep * max) / bytes) - 1));
  }
}
