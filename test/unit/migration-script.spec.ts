// `pgqueue migrate --print`: the installer's work as one SQL script. Applying it is tested in test/cli/cli.spec.ts.
import { LATEST_VERSION, migrationScript } from '../../lib/core/runtime/migrate.js';
import { MIGRATIONS } from '../../schema/migrations/index.js';

describe('the migration script', () => {
  it('runs in one transaction: the lock, the schema, the guard on the version, then each migration and its record', () => {
    const { from, to, sql } = migrationScript('app_queue', '"app_queue"', 0);
    expect({ from, to }).toEqual({ from: 0, to: LATEST_VERSION });
    expect(sql.startsWith('-- nestjs-pgqueue ')).toBe(true);
    const at = (text: string) => {
      const i = sql.indexOf(text);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    const order = [
      at('\nBEGIN;\n'),
      at(`SELECT pg_advisory_xact_lock(1885824373, hashtext('app_queue'));`),
      at('CREATE SCHEMA IF NOT EXISTS "app_queue";'),
      at('CREATE TABLE IF NOT EXISTS "app_queue".migrations'),
      at('IF installed <> 0 THEN'),
      ...MIGRATIONS.flatMap((m) => [
        at(`-- migration ${m.version}: ${m.name}\n`),
        at(`INSERT INTO "app_queue".migrations (version, name) VALUES (${m.version}, '${m.name}');`),
      ]),
      at('\nCOMMIT;\n'),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(sql).not.toMatch(/\$[12]\b/);
  });

  it('from a version, holds only the migrations above it and guards on that version', () => {
    const { from, to, sql } = migrationScript('pgqueue', '"pgqueue"', LATEST_VERSION - 2);
    expect({ from, to }).toEqual({ from: LATEST_VERSION - 2, to: LATEST_VERSION });
    expect(sql).toContain(`IF installed <> ${LATEST_VERSION - 2} THEN`);
    expect(sql.match(/^INSERT INTO "pgqueue".migrations/gm)).toHaveLength(2);
    expect(sql).not.toContain(`-- migration ${LATEST_VERSION - 2}:`);
  });

  it('at the newest version (or past it) is a comment: nothing to apply', () => {
    expect(migrationScript('pgqueue', '"pgqueue"', LATEST_VERSION)).toEqual({
      from: LATEST_VERSION,
      to: LATEST_VERSION,
      sql: `-- schema "pgqueue" is at version ${LATEST_VERSION}: nothing to apply (newest: ${LATEST_VERSION})\n`,
    });
    expect(migrationScript('pgqueue', '"pgqueue"', LATEST_VERSION + 1).to).toBe(LATEST_VERSION + 1);
  });
});
