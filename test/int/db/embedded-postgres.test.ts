import { mkdtemp, readFile, readlink, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.ts';
import { BINARY_CACHE } from '../../../src/db/embedded-as-root.ts';
import { startEmbeddedPostgres } from '../../../src/db/embedded.ts';
import { openDatabase } from '../../../src/db/open.ts';

/**
 * The default mode: no DATABASE_URL, a real PostgreSQL started from the npm package with its
 * data in a folder. Here the tests may run as root, which PostgreSQL refuses; the embedded
 * server then runs as the system user postgres, from root's copy of the programs.
 */
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-embedded-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function scalar<T>(connectionString: string, sql: string, params: unknown[] = []): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return Object.values((await client.query(sql, params)).rows[0] ?? {})[0] as T;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  it('starts in an empty folder, answers, stops, and keeps its data across a restart', { timeout: 180_000 }, async () => {
    const first = await startEmbeddedPostgres(dataDir);
    try {
      expect(await scalar<number>(first.connectionString, 'SELECT 1 + 1 AS n')).toBe(2);
      await scalar(first.connectionString, 'CREATE TABLE kept (note text)');
      await scalar(first.connectionString, "INSERT INTO kept VALUES ('written before the restart')");
    } finally {
      await first.stop();
    }
    await expect(scalar(first.connectionString, 'SELECT 1')).rejects.toThrow();

    const second = await startEmbeddedPostgres(dataDir);
    try {
      expect(await scalar<string>(second.connectionString, 'SELECT note FROM kept')).toBe('written before the restart');
    } finally {
      await second.stop();
    }
  });

  it('is what openDatabase uses when DATABASE_URL is not set', { timeout: 180_000 }, async () => {
    const env = { ...process.env };
    delete env.DATABASE_URL;
    const config = loadConfig(env, { DATA_DIR: dataDir });
    expect(config.databaseUrl).toBeUndefined();
    const database = await openDatabase(config);
    try {
      expect(database.embedded).toBe(true);
      expect(await scalar<string>(database.connectionString, 'SELECT note FROM kept')).toBe('written before the restart');
    } finally {
      await database.close();
    }
  });

  it.skipIf(process.getuid?.() !== 0)('as root: runs as the user postgres, from a copy of the programs only root may change', { timeout: 180_000 }, async () => {
    const server = await startEmbeddedPostgres(dataDir);
    try {
      const pid = Number((await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      const program = await readlink(`/proc/${pid}/exe`);
      expect(path.dirname(path.dirname(path.dirname(program)))).toBe(BINARY_CACHE);
      expect(program).toMatch(/\/postgres-\d[^/]*-linux-[^/]+\/bin\/postgres$/);
      const uid = Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]);
      expect(uid).toBe((await stat(path.join(dataDir, 'pg'))).uid);
      expect(uid).not.toBe(0);
      for (const folder of [BINARY_CACHE, path.dirname(path.dirname(program)), path.dirname(program)]) {
        const s = await stat(folder);
        expect(s.uid, folder).toBe(0);
        expect(s.mode & 0o777, folder).toBe(0o755);
      }
      expect((await stat(program)).mode & 0o777).toBe(0o755);
    } finally {
      await server.stop();
    }
  });
});
