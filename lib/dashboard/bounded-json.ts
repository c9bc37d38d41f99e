// JSON.stringify(value, null, 2), written only as far as `max` characters: the job view shows a payload that may be
// tens of megabytes, and pretty-printing all of it to show its first 64 KB would take twice its size in the heap and
// the event loop's time for as long. Pure.

/** Why a value has no JSON (what JSON.stringify would throw), as the page says it. */
export class Unrenderable extends Error {}

/**
 * `value` as `JSON.stringify(value, null, 2)` writes it, cut after `max` characters (`cut`); never builds more than
 * `max` characters of output (but one string's escapes), and never converts a long string in full. Throws
 * Unrenderable where JSON.stringify would throw (a cycle, a BigInt); a value with no JSON at all (a function) is
 * `undefined`.
 */
export function boundedJson(value: unknown, max: number): { text: string | undefined; cut: boolean } {
  const parts: string[] = [];
  let length = 0;
  let cut = false;
  const emit = (s: string): void => {
    if (cut) return;
    if (length + s.length > max) {
      parts.push(s.slice(0, max - length));
      length = max;
      cut = true;
    } else {
      parts.push(s);
      length += s.length;
    }
  };
  const seen = new Set<object>();

  /** Writes `v` (its toJSON() already applied) at `indent`. */
  const write = (v: unknown, indent: string): void => {
    if (cut) return;
    switch (typeof v) {
      case 'undefined':
      case 'function':
      case 'symbol':
        emit('null');
        return;
      case 'bigint':
        throw new Unrenderable('Do not know how to serialize a BigInt');
      case 'string':
        // only what can still be shown is converted: a quote and escapes take at most 6 characters a character
        emit(JSON.stringify(v.length > max - length ? v.slice(0, max - length + 1) : v));
        return;
      case 'number':
        emit(Number.isFinite(v) ? String(v) : 'null');
        return;
      case 'boolean':
        emit(String(v));
        return;
      case 'object':
        break;
    }
    if (v === null) {
      emit('null');
      return;
    }
    const object = v;
    if (seen.has(object)) throw new Unrenderable('Converting circular structure to JSON');
    seen.add(object);
    const inner = `${indent}  `;
    if (Array.isArray(object)) {
      if (object.length === 0) emit('[]');
      else {
        emit('[');
        object.forEach((item, i) => {
          if (cut) return;
          emit(`${i === 0 ? '' : ','}\n${inner}`);
          write(jsonOf(item, String(i)), inner);
        });
        emit(`\n${indent}]`);
      }
    } else {
      let first = true;
      emit('{');
      for (const key of Object.keys(object)) {
        if (cut) break;
        const item = jsonOf((object as Record<string, unknown>)[key], key);
        if (!hasJson(item)) continue;
        emit(`${first ? '' : ','}\n${inner}${JSON.stringify(key)}: `);
        write(item, inner);
        first = false;
      }
      emit(first ? '}' : `\n${indent}}`);
    }
    seen.delete(object);
  };

  const top = jsonOf(value, '');
  if (!hasJson(top)) return { text: undefined, cut: false };
  write(top, '');
  return { text: parts.join(''), cut };
}

/** What JSON.stringify writes for `v`: its toJSON(key)'s answer where it has one (a Date's ISO text). */
function jsonOf(v: unknown, key: string): unknown {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function'
    ? (v as { toJSON(key: string): unknown }).toJSON(key)
    : v;
}

/** Whether JSON has a value for `v` (undefined, functions and symbols have none: left out of objects). */
function hasJson(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
}
