import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectionWrite } from '../../../projector/projection-write.ts';
import { PROJECTION_WRITE_LOCK } from '../../../src/db/locks.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/**
 * Every transaction of the projector that writes projection.* holds PROJECTION_WRITE_LOCK, asks
 * whether its process still leads before writing, and keeps nothing when it had nothing to do.
 */

let db: TestDatabase;
let other: pg.Client;
let leading = true;
const write = () => createProjectionWrite(() => db.pool, { stillHeld: async () => leading });

beforeAll(async () => {
  db = await createTestDatabase();
  other = new pg.Client({ connectionString: db.url });
  await other.connect();
});
afterAll(async () => {
  await other.end();
  await db.drop();
});

async function siteUrl(): Promise<string | null> {
  const { rows } = await db.pool.query<{ site_url: string | null }>('SELECT site_url FROM projection.state');
  return rows[0]?.site_url ?? null;
}

async function lockFreeElsewhere(): Promise<boolean> {
  const { rows } = await other.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [PROJECTION_WRITE_LOCK]);
  if (rows[0]?.ok) await other.query('SELECT pg_advisory_unlock($1)', [PROJECTION_WRITE_LOCK]);
  return rows[0]?.ok === true;
}

describe('a projection write', () => {
  it('holds PROJECTION_WRITE_LOCK while it runs, and commits what it returns a value for', async () => {
    leading = true;
    const result = await write()(async (client) => {
      await client.query(`UPDATE projection.state SET site_url = 'https://one.example'`);
      return { lockFree: await lockFreeElsewhere() };
    });
    expect(result).toEqual({ lockFree: false });
    expect(await siteUrl()).toBe('https://one.example');
    expect(await lockFreeElsewhere()).toBe(true);
  });

  it('keeps nothing when it returns undefined (nothing to do)', async () => {
    const result = await write()(async (client) => {
      await client.query(`UPDATE projection.state SET site_url = 'https://two.example'`);
      return undefined;
    });
    expect(result).toBeUndefined();
    expect(await siteUrl()).toBe('https://one.example');
  });

  it('does not run at all in a process that no longer leads', async () => {
    leading = false;
    let ran = false;
    const result = await write()(async () => {
      ran = true;
      return 1;
    });
    expect(result).toBeUndefined();
    expect(ran).toBe(false);
    leading = true;
  });

  it('waits for another transaction holding the lock (a rebuild, another process)', async () => {
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock($1)', [PROJECTION_WRITE_LOCK]);
    let ran = false;
    const waiting = write()(async () => {
      ran = true;
      return 'after';
    });
    // Its session shows up waiting for the lock.
    await expect
      .poll(async () => {
        const { rows } = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return rows[0]!.n;
      })
      .toBe(1);
    expect(ran).toBe(false);
    await other.query('COMMIT');
    expect(await waiting).toBe('after');
  });

  it('rolls back and fails when the body fails', async () => {
    await expect(
      write()(async (client) => {
        await client.query(`UPDATE projection.state SET site_url = 'https://three.example'`);
        throw new Error('batch failed');
      }),
    ).rejects.toThrow('batch failed');
    expect(await siteUrl()).toBe('https://one.example');
  });
});
