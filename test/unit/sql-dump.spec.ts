// lib/core/sql/statements.sql is every statement rendered as SQL (lib/core/sql/dump.ts), so that a review reads the
// SQL a change produces. It is only useful while current: here, it must be exactly what the statements render now.
import { readdirSync, readFileSync } from 'node:fs';
import { renderStatements } from '../../lib/core/sql/dump.js';

const file = 'lib/core/sql/statements.sql';

/** Where two texts first differ, as a few numbered lines of each, under the statement they are in. */
function firstDifference(checkedIn: string, rendered: string): string {
  const [a, b] = [checkedIn.split('\n'), rendered.split('\n')];
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  // a statement's header: a line `-- name`, `-- name (per queue)` or `-- file.ts: name` after a blank line
  const header = a.slice(0, i).findLast((line, k, above) => above[k - 1] === '' && /^-- [\w.-]+(: \w+)?( \(.*\))?$/.test(line));
  const lines = (text: string[]) => text.slice(i, i + 3).map((line, k) => `  ${i + k + 1}: ${line}`);
  return [`${file}, from line ${i + 1} (${header ?? 'its header'}):`, ...lines(a), 'rendered now:', ...lines(b)].join('\n');
}

describe('the SQL dump', () => {
  it('is what the statements of lib/core/sql render now', () => {
    const rendered = renderStatements();
    const checkedIn = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    if (rendered === checkedIn) return;
    throw new Error(
      `${file} is not the SQL that lib/core/sql renders now. Run \`npm run sql:dump\`, then review the change ` +
        `(git diff ${file}) and commit it with the change that made it.\n\n${firstDifference(checkedIn, rendered)}`,
    );
  });

  it('shows every statement of every file in lib/core/sql', async () => {
    const dump = renderStatements();
    // fragments.ts and insert-jobs.ts hold fragments, shown inside the statements built from them; index.ts builds
    // the statements and dump.ts renders them
    const files = readdirSync(new URL('../../lib/core/sql/', import.meta.url)).filter(
      (f) => f.endsWith('.ts') && !['fragments.ts', 'insert-jobs.ts', 'index.ts', 'dump.ts'].includes(f),
    );
    expect(files.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const f of files) {
      const mod = (await import(`../../lib/core/sql/${f.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        // argument builders (...Args) and settings (numbers) are no statements
        if (name.endsWith('Args') || typeof value === 'number') continue;
        const header = new RegExp(`^-- (${f.replace('.', '\\.')}: )?${name}( \\(|$)`, 'm');
        if (!header.test(dump)) missing.push(`${f}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
