import { Inject, Injectable, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { integer, pgSchema, serial, text, timestamp } from 'drizzle-orm/pg-core';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';

/** The shop's own tables, in a schema of their own beside the queue's. */
export function shopTables(schemaName: string) {
  const schema = pgSchema(schemaName);
  const orders = schema.table('orders', {
    id: serial('id').primaryKey(),
    customerId: text('customer_id').notNull(),
    totalCents: integer('total_cents').notNull(),
    card: text('card').notNull(),
    status: text('status').notNull().default('pending'),
    createdOn: timestamp('created_on', { withTimezone: true }).notNull().defaultNow(),
  });
  return { orders };
}
export type ShopTables = ReturnType<typeof shopTables>;

/** What the shop's providers inject: its Drizzle database (on a pool of its own) and its tables. */
export class Shop {
  constructor(
    readonly db: NodePgDatabase,
    readonly tables: ShopTables,
    readonly schemaName: string,
    readonly pool: pg.Pool,
  ) {}
}

export const SHOP_OPTIONS = Symbol('shop options');
export interface ShopOptions {
  connectionString: string;
  /** The schema of the shop's tables (default `shop`). */
  schema?: string;
}

/** Creates the shop's table when it is missing (the sample's own migration), and ends its pool at shutdown. */
@Injectable()
class ShopLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(Shop) private readonly shop: Shop) {}

  async onModuleInit(): Promise<void> {
    const s = `"${this.shop.schemaName}"`;
    await this.shop.pool.query(`CREATE SCHEMA IF NOT EXISTS ${s};
      CREATE TABLE IF NOT EXISTS ${s}.orders (id serial PRIMARY KEY, customer_id text NOT NULL, total_cents integer NOT NULL,
        card text NOT NULL, status text NOT NULL DEFAULT 'pending', created_on timestamptz NOT NULL DEFAULT now())`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.shop.pool.end();
  }
}

/** The shop's database, for the whole app. */
@Module({})
export class ShopDatabaseModule {
  static forRoot(options: ShopOptions) {
    const schemaName = options.schema ?? 'shop';
    return {
      module: ShopDatabaseModule,
      global: true,
      providers: [
        {
          provide: Shop,
          useFactory: () => {
            const pool = new pg.Pool({ connectionString: options.connectionString, max: 5 });
            // an idle connection the server drops (a restart) must not end the process: the next query reconnects
            pool.on('error', (err) => new Logger('Shop').warn(`idle connection error: ${err.message}`));
            return new Shop(drizzle(pool), shopTables(schemaName), schemaName, pool);
          },
        },
        ShopLifecycle,
      ],
      exports: [Shop],
    };
  }
}
