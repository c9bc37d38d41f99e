// The engine and the command line run without Nest: a plain script, the `pgqueue` bin. Neither may import it.
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
});
