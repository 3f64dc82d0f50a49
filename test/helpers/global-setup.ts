import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { alive, startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.ts';
import { listMigrations, migrate } from '../../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    runId: string;
  }
}

/** The embedded server's folder of each run: `<tmp>/catalog-test-pg-XXXXXX`, removed at its end. */
const RUN_FOLDER = 'catalog-test-pg-';

/** Removes a run's folder, and the server's data folder where it is a link to one elsewhere (as root: src/db/embedded-as-root.ts). */
async function removeRunFolder(dir: string): Promise<void> {
  const pg = path.join(dir, 'pg');
  if ((await lstat(pg).catch(() => undefined))?.isSymbolicLink()) await rm(path.resolve(dir, await readlink(pg)), { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
}

/**
 * The folders of earlier runs that were killed outright (the process that started their server
 * is gone): the server left running there is stopped (PostgreSQL's fast shutdown) and the folder
 * removed. A run that ends normally, or by a signal, leaves nothing behind.
 */
async function removeLeftovers(): Promise<void> {
  for (const name of await readdir(os.tmpdir())) {
    if (!name.startsWith(RUN_FOLDER)) continue;
    const dir = path.join(os.tmpdir(), name);
    const owner = Number((await readFile(path.join(dir, 'pg-owner.pid'), 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    const server = Number((await readFile(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (Number.isInteger(server) && server > 0 && alive(server)) {
      process.kill(server, 'SIGINT');
      for (let i = 0; i < 200 && alive(server); i++) await new Promise((r) => setTimeout(r, 50));
    }
    await removeRunFolder(dir);
  }
}

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL when set (a developer's own server), else
 * an embedded server of the run's own in a new temporary folder. Runs at the same time on one
 * machine never share that server, so the end of one cannot stop another's database.
 * A migrated template database is made once; each test file clones it (see db.ts), so files
 * run in parallel on databases of their own.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | undefined;
  let runFolder: string | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    await removeLeftovers();
    runFolder = await mkdtemp(path.join(os.tmpdir(), RUN_FOLDER));
    embedded = await startEmbeddedPostgres(runFolder);
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
    // The run's own server goes with its folder, databases and all.
    if (embedded) {
      await embedded.stop();
      await removeRunFolder(runFolder!);
      return;
    }
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const dbs = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`catalog_t_${runId}_%`]);
    for (const { datname } of dbs.rows) {
      await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
    }
    await c.end();
  };
}
