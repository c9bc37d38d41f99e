// Text from the database (a job's error message, a queue's settings) or from a driver's error, made safe to write to an
// operator's terminal: a stored message holding `\x1b[2J` would clear the screen, a `\x1b]52;…` write the clipboard,
// a carriage return overwrite the line before it, a right-to-left override reorder what the eye reads. Outside --json
// every such character is written as an escape instead; --json is left to JSON, for scripts. Pure.

/**
 * The characters escaped: C0 controls (tab, line feed and ESC among them), DEL and C1 controls, the Unicode line and
 * paragraph separators, and the bidirectional formatting characters (marks, embeddings, overrides, isolates).
 */
// eslint-disable-next-line no-control-regex -- the control characters are what is matched
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A character as an escape a reader can see: `\x1b` up to 0xff, else `\u202e`. */
function escape(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control and bidirectional formatting character written as an escape, so it stays on its line. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escape);
}

/** Each line of `text` printable, its line breaks kept: for messages of several lines (commander's). */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}
