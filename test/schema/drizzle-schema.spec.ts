/**
 * The Drizzle definitions in schema/index.ts must describe the tables the migrations really install.
 * The migrations are the truth: this file installs a fresh schema through PgQueue, reads it back from
 * the catalog, and compares it with `createQueueSchema(name)` read through drizzle's `getTableConfig`.
 * Compared: tables (partitions left out), columns (type, NOT NULL, default present), primary keys,
 * non-PK indexes (column order, DESC and NULLS FIRST/LAST, uniqueness, method, partial predicate)
 * and the enums' values in order.
 */
import { is } from 'drizzle-orm';
import { getTableConfig, IndexedColumn, isPgEnum, PgDialect, PgTable, type PgColumn } from 'drizzle-orm/pg-core';
import { PgQueue } from '../../lib/core/pg-queue.js';
import * as defaultExports from '../../schema/index.js';
import { createQueueSchema } from '../../schema/index.js';
import { dropSchema, recordingLogger, testPool, testUrl, uniqueSchema } from '../helpers/db.js';

interface ColumnDesc {
  name: string;
  type: string;
  notNull: boolean;
  hasDefault: boolean;
}

interface IndexColumnDesc {
  name: string;
  desc: boolean;
  nullsFirst: boolean;
}

interface IndexDesc {
  table: string;
  name: string;
  method: string;
  unique: boolean;
  columns: IndexColumnDesc[];
  partial: boolean;
}

interface Description {
  tables: string[];
  columns: Record<string, ColumnDesc[]>;
  primaryKeys: Record<string, string[]>;
  indexes: IndexDesc[];
  predicates: Record<string, string | null>;
  enums: Record<string, string[]>;
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Spellings of one type that PostgreSQL and drizzle write differently, brought to format_type's. */
function normaliseType(type: string): string {
  const t = type.trim().toLowerCase().replace(/\s+\(/g, '(').replace(/\s+/g, ' ');
  const aliases: Record<string, string> = {
    int: 'integer',
    int4: 'integer',
    int8: 'bigint',
    int2: 'smallint',
    bool: 'boolean',
    float8: 'double precision',
    float4: 'real',
    varchar: 'character varying',
    timestamptz: 'timestamp with time zone',
    timestamp: 'timestamp without time zone',
    timetz: 'time with time zone',
    time: 'time without time zone',
  };
  const precision = /^(timestamp|time)(\(\d+\))?$/.exec(t);
  if (precision) return `${precision[1]}${precision[2] ?? ''} without time zone`;
  return aliases[t] ?? t;
}

/** A predicate's text, loosely: no casts, quotes, parentheses, table qualifiers or spacing differences. */
function normalisePredicate(text: string, table: string): string {
  return text
    .toLowerCase()
    .replace(/::[\w".]+(\[\])?/g, '')
    .replace(/"/g, '')
    .replace(new RegExp(`\\b${table}\\.`, 'g'), '')
    .replace(/[()]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What the catalog says about one schema. */
async function describeDatabase(pool: ReturnType<typeof testPool>, schema: string): Promise<Description> {
  const tables = await pool.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY c.relname`,
    [schema],
  );

  const columns = await pool.query<{
    table: string;
    name: string;
    type: string;
    type_schema: string;
    type_name: string;
    is_enum: boolean;
    not_null: boolean;
    has_default: boolean;
  }>(
    `SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            tn.nspname AS type_schema, t.typname AS type_name, t.typtype = 'e' AS is_enum,
            a.attnotnull AS not_null, (a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '') AS has_default
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_type t ON t.oid = a.atttypid
       JOIN pg_namespace tn ON tn.oid = t.typnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attname`,
    [schema],
  );

  const primaryKeys = await pool.query<{ table: string; columns: string[] }>(
    `SELECT c.relname AS table,
            array(SELECT a.attname
                    FROM unnest(k.conkey) WITH ORDINALITY u(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
                   ORDER BY u.ord)::text[] AS columns
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND k.contype = 'p' AND NOT c.relispartition
      ORDER BY c.relname`,
    [schema],
  );

  // Key columns only (INCLUDE columns sit past indnkeyatts); indoption bit 0 is DESC, bit 1 NULLS FIRST.
  const indexes = await pool.query<{
    table: string;
    name: string;
    method: string;
    unique: boolean;
    predicate: string | null;
    columns: { name: string | null; option: number }[];
  }>(
    `SELECT c.relname AS table, i.relname AS name, am.amname AS method, x.indisunique AS unique,
            pg_get_expr(x.indpred, x.indrelid) AS predicate,
            (SELECT json_agg(json_build_object('name', a.attname, 'option', o.option) ORDER BY k.ord)
               FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
               JOIN unnest(x.indoption::int2[]) WITH ORDINALITY o(option, ord) ON o.ord = k.ord
               LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              WHERE k.ord <= x.indnkeyatts) AS columns
       FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_class c ON c.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_am am ON am.oid = i.relam
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND NOT x.indisprimary
      ORDER BY c.relname, i.relname`,
    [schema],
  );

  const enums = await pool.query<{ name: string; values: string[] }>(
    `SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder)::text[] AS values
       FROM pg_type t
       JOIN pg_namespace n ON n.oid = t.typnamespace
       JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE n.nspname = $1
      GROUP BY t.typname
      ORDER BY t.typname`,
    [schema],
  );

  const description: Description = {
    tables: tables.rows.map((r) => r.name),
    columns: {},
    primaryKeys: {},
    indexes: [],
    predicates: {},
    enums: {},
  };
  for (const r of columns.rows) {
    (description.columns[r.table] ??= []).push({
      name: r.name,
      // an enum is named with its schema, so one of the same name elsewhere does not pass for it
      type: r.is_enum ? `${r.type_schema}.${r.type_name}` : normaliseType(r.type),
      notNull: r.not_null,
      hasDefault: r.has_default,
    });
  }
  for (const r of primaryKeys.rows) description.primaryKeys[r.table] = r.columns;
  for (const r of indexes.rows) {
    description.indexes.push({
      table: r.table,
      name: r.name,
      method: r.method,
      unique: r.unique,
      columns: r.columns.map((c) => ({ name: c.name ?? '<expression>', desc: (c.option & 1) === 1, nullsFirst: (c.option & 2) === 2 })),
      partial: r.predicate !== null,
    });
    description.predicates[r.name] = r.predicate === null ? null : normalisePredicate(r.predicate, r.table);
  }
  for (const r of enums.rows) description.enums[r.name] = r.values;
  return description;
}

/** What the Drizzle definitions say, in the same shape. */
function describeDrizzle(defs: Record<string, unknown>): Description {
  const dialect = new PgDialect();
  const tables = Object.values(defs).filter((v): v is PgTable => is(v, PgTable));
  const description: Description = { tables: [], columns: {}, primaryKeys: {}, indexes: [], predicates: {}, enums: {} };

  for (const v of Object.values(defs)) {
    if (isPgEnum(v)) description.enums[v.enumName] = [...v.enumValues];
  }

  for (const table of tables) {
    const cfg = getTableConfig(table);
    description.tables.push(cfg.name);

    description.columns[cfg.name] = cfg.columns
      .map((col: PgColumn) => {
        const enumDef = (col as { enum?: unknown }).enum;
        const type = isPgEnum(enumDef) ? `${enumDef.schema ?? 'public'}.${enumDef.enumName}` : normaliseType(col.getSQLType());
        return {
          name: col.name,
          type,
          // a primary key column is NOT NULL in PostgreSQL whether or not drizzle says so
          notNull: col.notNull || col.primary || cfg.primaryKeys.some((pk) => pk.columns.includes(col)),
          // a default the database holds: not defaultFn / onUpdateFn, which drizzle fills in on the client
          hasDefault:
            col.default !== undefined ||
            col.generatedIdentity !== undefined ||
            col.generated !== undefined ||
            /serial$/.test(col.getSQLType()),
        };
      })
      .sort(byName);

    const pkColumns = [
      ...cfg.columns.filter((c) => c.primary).map((c) => [c.name]),
      ...cfg.primaryKeys.map((pk) => pk.columns.map((c) => c.name)),
    ];
    if (pkColumns.length > 1) throw new Error(`drizzle table ${cfg.name} declares ${pkColumns.length} primary keys`);
    if (pkColumns[0]) description.primaryKeys[cfg.name] = pkColumns[0];

    for (const idx of cfg.indexes) {
      const ic = idx.config;
      if (!ic.name) throw new Error(`an index of drizzle table ${cfg.name} has no name: the migration names every index`);
      description.indexes.push({
        table: cfg.name,
        name: ic.name,
        method: ic.method ?? 'btree',
        unique: ic.unique,
        columns: ic.columns.map((c) => {
          if (!is(c, IndexedColumn)) return { name: '<expression>', desc: false, nullsFirst: false };
          const desc = c.indexConfig?.order === 'desc';
          // drizzle 0.45 pins nulls 'last' even on desc() (drizzle-kit emits DESC NULLS LAST); if unset, PostgreSQL's default applies
          return { name: c.name!, desc, nullsFirst: (c.indexConfig?.nulls ?? (desc ? 'first' : 'last')) === 'first' };
        }),
        partial: ic.where !== undefined,
      });
      description.predicates[ic.name] =
        ic.where === undefined ? null : normalisePredicate(dialect.sqlToQuery(ic.where.inlineParams()).sql, cfg.name);
    }
    // unique constraints and .unique() columns become unique btree indexes of the same name in the database
    for (const uc of cfg.uniqueConstraints) {
      description.indexes.push({
        table: cfg.name,
        name: uc.getName()!,
        method: 'btree',
        unique: true,
        columns: uc.columns.map((c) => ({ name: c.name, desc: false, nullsFirst: false })),
        partial: false,
      });
      description.predicates[uc.getName()!] = null;
    }
    for (const col of cfg.columns.filter((c) => c.isUnique)) {
      const name = col.uniqueName ?? `${cfg.name}_${col.name}_key`;
      description.indexes.push({
        table: cfg.name,
        name,
        method: 'btree',
        unique: true,
        columns: [{ name: col.name, desc: false, nullsFirst: false }],
        partial: false,
      });
      description.predicates[name] = null;
    }
  }

  description.tables.sort();
  description.indexes.sort((a, b) => (a.table === b.table ? byName(a, b) : a.table < b.table ? -1 : 1));
  return description;
}

describe('drizzle schema matches the migrated database', () => {
  const admin = testPool(2);
  const schema = uniqueSchema('drizzle');
  let db: Description;
  let drizzle: Description;

  beforeAll(async () => {
    const q = new PgQueue({ connectionString: testUrl(), schema, logger: recordingLogger() });
    try {
      await q.start();
    } finally {
      await q.close();
    }
    db = await describeDatabase(admin, schema);
    drizzle = describeDrizzle(createQueueSchema(schema));
  });

  afterAll(async () => {
    try {
      await dropSchema(admin, schema);
    } finally {
      await admin.end();
    }
  });

  it('the migration installed something to compare', () => {
    // guards the comparisons below against two empty descriptions agreeing
    expect(db.tables).toEqual(expect.arrayContaining(['jobs', 'queues', 'migrations']));
    expect(db.indexes.length).toBeGreaterThan(0);
    expect(Object.keys(db.enums)).toContain('job_state');
  });

  it('every drizzle table is in the given schema', () => {
    const defs = createQueueSchema(schema);
    for (const v of Object.values(defs)) {
      if (is(v, PgTable)) expect(getTableConfig(v).schema).toBe(schema);
    }
    expect(defs.jobState.schema).toBe(schema);
    expect(defs.schema.schemaName).toBe(schema);
  });

  it('has the same tables, partitions left out', () => {
    expect(db.tables).not.toContain('jobs_default');
    expect(drizzle.tables).toEqual(db.tables);
  });

  it('has the same columns: name, type, NOT NULL and whether a default exists', () => {
    expect(drizzle.columns).toEqual(db.columns);
  });

  it('has the same primary keys, columns in order', () => {
    expect(drizzle.primaryKeys).toEqual(db.primaryKeys);
  });

  it('has the same indexes: name, columns in order, DESC and NULLS order, uniqueness, method, partial or not', () => {
    expect(drizzle.indexes).toEqual(db.indexes);
  });

  it('has the same partial-index predicates, compared loosely', () => {
    expect(drizzle.predicates).toEqual(db.predicates);
  });

  it('has the same enums, values in order', () => {
    expect(drizzle.enums).toEqual(db.enums);
    expect(db.enums.job_state).toEqual(['created', 'retry', 'active', 'completed', 'cancelled', 'failed']);
  });
});

describe('default exports', () => {
  it("use the schema 'pgqueue'", () => {
    expect(getTableConfig(defaultExports.jobs).schema).toBe('pgqueue');
    expect(getTableConfig(defaultExports.queues).schema).toBe('pgqueue');
    expect(getTableConfig(defaultExports.migrations).schema).toBe('pgqueue');
    expect(defaultExports.jobState.schema).toBe('pgqueue');
    expect(defaultExports.pgqueueSchema.schemaName).toBe('pgqueue');
  });
});
