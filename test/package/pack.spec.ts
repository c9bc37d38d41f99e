// What `npm pack` ships, as users get it: the compiled library with its types and source maps for every entry
// point in package.json's `exports`, the license, the README and the docs it links to; no sources, tests or stale output, and maps
// that carry the sources they point to. The test command has just built dist/ (from an empty folder, as
// prepack does for a real pack), so the pack runs with --ignore-scripts.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license: string;
  engines?: { node?: string };
  files: string[];
  exports: Record<string, Conditions>;
  typesVersions: Record<string, Record<string, string[]>>;
  bin?: Record<string, string>;
  scripts: Record<string, string>;
};

type Conditions = string | { [condition: string]: Conditions };
/** Every file a conditional export names, however deep its conditions nest. */
const targetsOf = (c: Conditions): string[] => (typeof c === 'string' ? [c] : Object.values(c).flatMap(targetsOf));

let packed: string[] = [];
beforeAll(() => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  packed = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}, 60_000);

describe('the package', () => {
  it('ships every entry point of exports, with its types', () => {
    const targets = Object.values(manifest.exports).flatMap(targetsOf);
    expect(targets.length).toBeGreaterThan(8);
    const missing = targets.map((t) => t.replace(/^\.\//, '')).filter((t) => !packed.includes(t));
    expect(missing).toEqual([]);
    for (const entry of [
      'dist/lib/index.js',
      'dist/lib/index.d.ts',
      'dist/schema/index.js',
      'dist/lib/nest/terminus.js',
      'dist/lib/nest/prometheus.js',
      'dist/lib/core/index.js',
      'dist/lib/testing/index.js',
      'dist/lib/testing/index.d.ts',
    ]) {
      expect(packed).toContain(entry);
    }
  });

  it('ships the pgqueue command: its bin target, compiled, starting with the line that runs it with node', () => {
    // npm makes the target executable when it links the bin on install
    expect(manifest.bin).toEqual({ pgqueue: 'dist/lib/cli/main.js' });
    expect(packed).toContain('dist/lib/cli/main.js');
    expect(readFileSync(join(root, 'dist/lib/cli/main.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('ships the license, the README with the docs it links to, the manifest, and nothing else outside dist/lib, dist/schema and its CommonJS build', () => {
    expect(packed).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'docs/options.md', 'docs/design.md']));
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    const stray = packed.filter(
      (p) =>
        !['LICENSE', 'README.md', 'package.json', 'dist/cjs/package.json'].includes(p) &&
        !/^(dist\/(lib|schema|cjs\/schema)\/|docs\/[\w-]+\.md$)/.test(p),
    );
    expect(stray).toEqual([]);
    expect(packed.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
  });

  it('gives node10 resolution (which reads no exports) the same types as exports, for every entry point', () => {
    // a CommonJS app's types: the `require` condition where there is one (the schema's CommonJS build)
    const typesOf = (c: Conditions): string | undefined =>
      typeof c === 'string' ? undefined : typeof c.types === 'string' ? c.types : typesOf(c.require ?? c.default ?? {});
    const subpaths = Object.keys(manifest.exports).filter((k) => k !== '.' && k !== './package.json');
    const mapped = manifest.typesVersions['*']!;
    expect(Object.keys(mapped).sort()).toEqual(subpaths.map((k) => k.slice(2)).sort());
    for (const subpath of subpaths) expect(mapped[subpath.slice(2)]).toEqual([typesOf(manifest.exports[subpath]!)!.slice(2)]);
    expect((manifest as unknown as { types: string }).types).toBe(typesOf(manifest.exports['.']!));
  });

  it('names in engines the Node major the tests run on, and only that one', () => {
    // .ci/run tests on one Node major; a user on another gets npm's engine warning rather than a silent promise.
    expect(manifest.engines?.node).toBe(`${process.versions.node.split('.')[0]}.x`);
  });

  it('ships no stale output: every compiled file has its source in lib/ or schema/, every copied one is itself there', () => {
    const sources = new Set(execFileSync('git', ['ls-files', 'lib', 'schema'], { cwd: root, encoding: 'utf8' }).split('\n'));
    const orphans = packed
      .filter((p) => p.endsWith('.js') || p.endsWith('.css'))
      // the CommonJS build of the schema (dist/cjs) comes from the same sources
      .map((p) => p.replace(/^dist\/(cjs\/)?/, ''))
      // compiled from a .ts, or copied as it is (the dashboard's assets)
      .filter((p) => !sources.has(p.replace(/\.js$/, '.ts')) && !sources.has(p));
    expect(orphans).toEqual([]);
    expect(packed).toEqual(
      expect.arrayContaining(['dist/lib/dashboard/assets/app.js', 'dist/lib/dashboard/assets/app.css', 'dist/lib/dashboard/render.js']),
    );
  });

  it('ships source maps that carry their sources (the .ts files are not shipped)', () => {
    const maps = packed.filter((p) => p.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(10);
    const without = maps.filter((m) => {
      const map = JSON.parse(readFileSync(join(root, m), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      return !map.sourcesContent || map.sourcesContent.length !== map.sources.length || map.sourcesContent.some((c) => !c);
    });
    expect(without).toEqual([]);
  });

  it('packs from a clean copy of the tracked files: prepack builds what it ships', () => {
    const copy = mkdtempSync(join(tmpdir(), 'pgqueue-pack-'));
    try {
      const tracked = execFileSync(
        'git',
        [
          'ls-files',
          'lib',
          'schema',
          'package.json',
          'tsconfig.json',
          'tsconfig.build.json',
          'tsconfig.cjs.json',
          'README.md',
          'docs',
          'LICENSE',
        ],
        { cwd: root, encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean);
      for (const file of tracked) cpSync(join(root, file), join(copy, file));
      symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
      const out = execFileSync('npm', ['pack', '--dry-run', '--json'], {
        cwd: copy,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
      expect(files).toEqual(
        expect.arrayContaining([
          'dist/lib/index.js',
          'dist/lib/index.d.ts',
          'dist/schema/index.js',
          'dist/lib/nest/terminus.js',
          'LICENSE',
        ]),
      );
      expect(files.sort()).toEqual([...packed].sort());
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);
});
