// Reads a scrape as Prometheus would: the exposition text's samples, by series.

/** The samples of a scrape in text format, by series (`name{label="value",…}` as printed, or the bare name). */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/** A series' key as samples() prints it: labels in the order given (prom-client prints a bucket's `le` first). */
export function series(name: string, labels: Record<string, string | number> = {}): string {
  const inner = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return inner ? `${name}{${inner}}` : name;
}
