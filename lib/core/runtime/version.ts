// The package's own version, read once from its package.json: the cluster registry shows which version each
// instance runs, so a rolling deploy can be watched. The file is found by walking up from this module, which sits
// at lib/core/ in the sources and dist/lib/core/ in the package.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | null = null;

/** The version of nestjs-pgqueue this code is, or 'unknown' when its package.json cannot be read. */
export function packageVersion(): string {
  if (cached !== null) return cached;
  cached = 'unknown';
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'nestjs-pgqueue' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      // no package.json here: look one level up
    }
    dir = dirname(dir);
  }
  return cached;
}
