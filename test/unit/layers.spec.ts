// The engine and the command line run without Nest: a plain script, the `pgqueue` bin. Neither may import it.
// And the house stays in rooms (docs/design.md, "The pieces"): lib/core's root holds the public face and its types
// only, every other file a folder by role, and no file grows past what a reader takes in at one sitting.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('layers', () => {
  it.each(['lib/core', 'lib/cli'])('%s imports nothing of Nest', (dir) => {
    const files = sources(dir);
    expect(files.length).toBeGreaterThan(5);
    const offending = files.filter((file) => /from\s+['"]@nestjs\//.test(readFileSync(join(root, file), 'utf8')));
    expect(offending).toEqual([]);
  });

  it("lib/core's root keeps at most 12 files: the public face and its types", () => {
    const files = readdirSync(join(root, 'lib/core')).filter((name) => !statSync(join(root, 'lib/core', name)).isDirectory());
    expect(files.length).toBeLessThanOrEqual(12);
  });

  it("each folder of lib/core keeps at most 12 files, but sql/ (one file per phase of a job's life)", () => {
    const folders = (dir: string): string[] =>
      readdirSync(join(root, dir)).flatMap((name) => {
        const path = join(dir, name);
        return statSync(join(root, path)).isDirectory() ? [path, ...folders(path)] : [];
      });
    const crowded = folders('lib/core')
      .filter((dir) => dir !== join('lib', 'core', 'sql'))
      .map((dir) => ({ dir, files: readdirSync(join(root, dir)).filter((n) => n.endsWith('.ts')).length }))
      .filter(({ files }) => files > 12);
    expect(crowded).toEqual([]);
  });

  it('no source file in lib/ is over 400 lines, the facade (lib/core/pg-queue.ts) over 500', () => {
    const limit = (file: string) => (file === join('lib', 'core', 'pg-queue.ts') ? 500 : 400);
    const long = sources('lib')
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length - 1 }))
      .filter(({ file, lines }) => lines > limit(file));
    expect(long).toEqual([]);
  });
});
