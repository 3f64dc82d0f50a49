import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    runId: string;
  }
}

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL when set (CI), else an embedded server.
 * A migrated template database is made once; each test file clones it (see db.ts), so files
 * run in parallel on databases of their own.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    embedded = await startEmbeddedPostgres(path.join(os.tmpdir(), 'catalog-test-pg'));
    adminUrl = embedded.connectionString;
  }
  const hash = createHash('sha256');
  for (const m of await listMigrations()) hash.update(m.file).update(await readFile(m.file));
  const template = `catalog_tpl_${hash.digest('hex').slice(0, 12)}`;
  const runId = randomBytes(4).toString('hex');

  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // Serialize template creation between concurrent runs on one server.
  await admin.query('SELECT pg_advisory_lock(7430099)');
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${template}`);
      const url = new URL(adminUrl);
      url.pathname = `/${template}`;
      try {
        await migrate(url.toString());
      } catch (err) {
        await admin.query(`DROP DATABASE IF EXISTS ${template}`);
        throw err;
      }
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock(7430099)');
    await admin.end();
  }

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('runId', runId);

  return async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const dbs = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`catalog_t_${runId}_%`]);
    for (const { datname } of dbs.rows) {
      await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
    }
    await c.end();
    await embedded?.stop();
  };
}
