import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjector, projectionLag } from '../../../projector/projector.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { insertListing } from '../../helpers/write-model.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('projection lag', () => {
  it('reports waiting changes and names the open transaction that holds the projector back', async () => {
    const warnings: Record<string, unknown>[] = [];
    const log = {
      info: () => undefined,
      error: () => undefined,
      warn: (obj: object | string) => {
        if (typeof obj === 'object') warnings.push(obj as Record<string, unknown>);
      },
    };
    const projector = createProjector({ connectionString: db.url, siteUrl: 'https://directory.example', pollMs: 100, log });
    await projector.start();
    const stuck = new pg.Client({ connectionString: db.url });
    await stuck.connect();
    try {
      await projector.catchUp();
      expect(await projectionLag(db.pool)).toEqual({ unprojectedRows: 0, oldestUnprojectedAgeSeconds: 0 });

      // A session opens a transaction, writes, and stays open; later changes wait behind it.
      await stuck.query('BEGIN');
      await insertListing(stuck);
      const { rows } = await stuck.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const waiting = await insertListing(db.pool);
      await expect.poll(async () => (await projectionLag(db.pool)).unprojectedRows).toBe(1);
      await expect
        .poll(() => warnings.find((w) => w.pid === rows[0]!.pid), { timeout: 30_000, interval: 200 })
        .toMatchObject({ pid: rows[0]!.pid, ageSeconds: expect.any(Number) });
      const lag = await projectionLag(db.pool);
      expect(lag.oldestUnprojectedAgeSeconds).toBeGreaterThan(0);

      await stuck.query('COMMIT');
      await projector.catchUp();
      expect((await db.pool.query('SELECT 1 FROM projection.products WHERE id = $1', [waiting])).rowCount).toBe(1);
      expect((await projectionLag(db.pool)).unprojectedRows).toBe(0);
    } finally {
      await stuck.end();
      await projector.stop();
    }
  }, 60_000);
});
