// docs/testing.md's example (under "An example") is the code
// test/e2e/testing-doc-example.e2e.spec.ts runs: its block must be, character for character, what that file holds between
// its two marker lines.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe("docs/testing.md's example", () => {
  it('is the code that test/e2e/testing-doc-example.e2e.spec.ts runs', () => {
    const page = readFileSync(`${root}docs/testing.md`, 'utf8');
    const section = page.slice(page.indexOf('## An example'));
    const block = /```ts\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 1)))?.[1];
    const spec = readFileSync(`${root}test/e2e/testing-doc-example.e2e.spec.ts`, 'utf8');
    const run = /\/\/ docs\/testing\.md example: begin\n([\s\S]*?)\/\/ docs\/testing\.md example: end\n/.exec(spec)?.[1];
    expect(block).toBeDefined();
    expect(block!.length).toBeGreaterThan(500);
    expect(run).toBe(block);
  });
});
