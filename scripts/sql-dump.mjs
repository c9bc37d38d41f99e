// `npm run sql:dump`: writes every statement of lib/core/sql/ as SQL to lib/core/sql/statements.sql, from the
// build (dist/), which the npm script makes first. test/unit/sql-dump.spec.ts keeps the file current.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderStatements } from '../dist/lib/core/sql/dump.js';

const file = new URL('../lib/core/sql/statements.sql', import.meta.url);
const text = renderStatements();
let before = null;
try {
  before = readFileSync(file, 'utf8');
} catch {
  // first dump: nothing to compare with
}
writeFileSync(file, text);
console.log(`lib/core/sql/statements.sql ${before === text ? 'unchanged' : 'written: review it with git diff'}`);
