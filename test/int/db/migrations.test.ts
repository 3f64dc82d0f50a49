import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/db/migrate.ts';
import { createEmptyDatabase } from '../../helpers/db.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const drops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const drop of drops.splice(0)) await drop();
});

async function emptyDatabase(): Promise<string> {
  const db = await createEmptyDatabase();
  drops.push(() => db.drop());
  return db.url;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('migrate', () => {
  it('applies every migration to an empty database, then has nothing left to do', async () => {
    const url = await emptyDatabase();
    const versions = (await listMigrations()).map((m) => m.version);
    expect(versions.length).toBeGreaterThanOrEqual(2);

    const logged: string[] = [];
    expect(await migrate(url, { log: (line) => logged.push(line) })).toEqual(versions);
    expect(logged).toEqual((await listMigrations()).map((m) => `applied migration ${path.basename(m.file)}`));
    const tables = await query<{ t: string }>(
      url,
      "SELECT table_schema || '.' || table_name AS t FROM information_schema.tables WHERE table_schema IN ('catalog', 'projection')",
    );
    expect(tables.map((r) => r.t)).toEqual(
      expect.arrayContaining(['catalog.categories', 'catalog.listings', 'catalog.outbox', 'catalog.makers', 'projection.products']),
    );

    expect(await migrate(url)).toEqual([]);
    const applied = await query<{ version: number }>(url, 'SELECT version FROM public.schema_migrations ORDER BY version');
    expect(applied.map((r) => r.version)).toEqual(versions);
  });

  it('applies each file once when two processes migrate the same empty database at once', async () => {
    const url = await emptyDatabase();
    const versions = (await listMigrations()).map((m) => m.version);
    const [a, b] = await Promise.all([migrate(url), migrate(url)]);
    expect([...a!, ...b!].sort((x, y) => x - y)).toEqual(versions);
    const applied = await query<{ version: number }>(url, 'SELECT version FROM public.schema_migrations ORDER BY version');
    expect(applied.map((r) => r.version)).toEqual(versions);
  });
});

describe('catalog migrate (the command)', () => {
  it('prints each applied file and a summary, then says the database is up to date', async () => {
    const url = await emptyDatabase();
    const run = () =>
      promisify(execFile)(process.execPath, [path.join(ROOT, 'bin/catalog.js'), 'migrate'], {
        env: { ...process.env, DATABASE_URL: url },
      });
    const files = (await listMigrations()).map((m) => path.basename(m.file));
    const first = await run();
    expect(first.stdout).toBe(
      `${files.map((f) => `applied migration ${f}\n`).join('')}applied ${files.length} migrations; database is up to date\n`,
    );
    expect((await run()).stdout).toBe('database is up to date\n');
  });
});
