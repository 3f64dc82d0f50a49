import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';

/**
 * A database of its own for a measurement: a scratch database on DATABASE_URL's server when
 * set, else an embedded PostgreSQL in a temporary folder. drop() removes all of it.
 */
export async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  let embedded: EmbeddedDatabase | undefined;
  let tmp: string | undefined;
  let admin = process.env.DATABASE_URL;
  if (!admin) {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'catalog-bench-'));
    embedded = await startEmbeddedPostgres(tmp);
    admin = embedded.connectionString;
  }
  const name = `catalog_bench_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
      await embedded?.stop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    },
  };
}
