// The README and docs/ link into each other, into tests and into benchmark results, and comments in lib/ cite
// sections of docs/design.md by name: each such reference must reach a file that exists, and a heading that
// exists in it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The text of a Markdown file without its fenced code blocks and inline code. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The anchors of a Markdown file's headings (a repeated heading gets -1, -2, … as on GitHub). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of readFileSync(file, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const markdown = [
  'README.md',
  'test/security/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('documentation links', () => {
  it('README and docs/ link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of markdown) {
      for (const [, target] of prose(readFileSync(join(root, file), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue; // an absolute URL
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const to = path === '' ? join(root, file) : resolve(dirname(join(root, file)), path);
        if (!existsSync(to)) broken.push(`${file}: ${target} (no such file)`);
        else if (anchor !== undefined && (!to.endsWith('.md') || !anchors(to).has(anchor)))
          broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('comments that cite a section of docs/design.md name a heading it has', () => {
    const headings = new Set([...readFileSync(join(root, 'docs/design.md'), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim()));
    const missing: string[] = [];
    for (const file of sources('lib')) {
      // a citation may wrap across comment lines: join them first
      const text = readFileSync(join(root, file), 'utf8').replace(/\n\s*\*\s*/g, ' ');
      for (const [, section] of text.matchAll(/docs\/design\.md, "([^"]+)"/g)) {
        if (!headings.has(section!)) missing.push(`${relative(root, join(root, file))}: "${section}"`);
      }
    }
    expect(missing).toEqual([]);
  });
});
