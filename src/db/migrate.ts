import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { projectPath } from '../util/project-file.ts';
import { MIGRATION_LOCK } from './locks.ts';
import { withTransaction } from './pool.ts';

const MIGRATIONS_DIR = projectPath('migrations');


export interface MigrationFile {
  version: number;
  name: string;
  file: string;
}

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  return files.map((file) => {
    const match = /^(\d+)_([\w-]+)\.sql$/.exec(file);
    if (!match) throw new Error(`migration file name must be NNN_name.sql: ${file}`);
    return { version: Number(match[1]), name: match[2]!, file: path.join(dir, file) };
  });
}

/**
 * Applies every migration not applied yet, in order, each in its own transaction. Returns the
 * versions applied by this call (empty when the database was already current).
 */
export async function migrate(connectionString: string, opts: { dir?: string; log?: (line: string) => void } = {}): Promise<number[]> {
  const client = new pg.Client({ connectionString });
  // A connection lost between two statements fails the next one, rather than the process.
  client.on('error', () => undefined);
  await client.connect();
  const files = await listMigrations(opts.dir);
  // Usually every file is applied already: one read says so, without the lock or any DDL.
  const current = await client
    .query<{ version: number }>('SELECT version FROM public.schema_migrations')
    .then(({ rows }) => {
      const applied = new Set(rows.map((r) => r.version));
      return files.every((m) => applied.has(m.version));
    })
    .catch(() => false);
  if (current) {
    await client.end();
    return [];
  }
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS public.schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Set((await client.query<{ version: number }>('SELECT version FROM public.schema_migrations')).rows.map((r) => r.version));
    const done: number[] = [];
    for (const m of files) {
      if (applied.has(m.version)) continue;
      const sql = await readFile(m.file, 'utf8');
      // Each file in a transaction of its own on this connection, which holds MIGRATION_LOCK
      // (session-level) from the first file to the last.
      await withTransaction(client, async () => {
        await client.query(sql);
        await client.query('INSERT INTO public.schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      }).catch((err: unknown) => {
        throw new Error(`migration ${path.basename(m.file)} failed: ${(err as Error).message}`, { cause: err });
      });
      opts.log?.(`applied migration ${path.basename(m.file)}`);
      done.push(m.version);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}
