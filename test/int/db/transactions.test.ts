import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, TransactionDeadlineError, withTransaction, type Pool } from '../../../src/db/pool.ts';
import { isDatabaseUnavailable } from '../../../src/db/unavailable.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

/**
 * withTransaction's options, each seen from PostgreSQL: the isolation level and access mode the
 * transaction has, the advisory lock another session finds taken, the timeouts cancelling what
 * runs too long, and what is kept (or not) when the transaction ends.
 */

/** A key of this file's own (each test file has its own database; advisory locks are per database). */
const KEY = 2 ** 40 + 99;

let db: TestDatabase;
let other: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('CREATE TABLE public.tx_probe (n int NOT NULL)');
  other = new pg.Client({ connectionString: db.url });
  await other.connect();
});
afterAll(async () => {
  await other.end();
  await db.drop();
});

async function probeRows(): Promise<number[]> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT n FROM public.tx_probe ORDER BY n');
  return rows.map((r) => r.n);
}

/** Whether another session could take KEY now (and lets it go again at once). */
async function freeElsewhere(key = KEY): Promise<boolean> {
  const { rows } = await other.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key]);
  if (rows[0]?.ok) await other.query('SELECT pg_advisory_unlock($1)', [key]);
  return rows[0]?.ok === true;
}

async function show(client: pg.ClientBase, setting: string): Promise<string> {
  const { rows } = await client.query<Record<string, string>>(`SHOW ${setting}`);
  return Object.values(rows[0]!)[0]!;
}

describe('how a transaction begins', () => {
  it('with the isolation level asked for, read committed by default', async () => {
    expect(await withTransaction(db.pool, (c) => show(c, 'transaction_isolation'))).toBe('read committed');
    expect(await withTransaction(db.pool, { isolation: 'read committed' }, (c) => show(c, 'transaction_isolation'))).toBe('read committed');
    expect(await withTransaction(db.pool, { isolation: 'repeatable read' }, (c) => show(c, 'transaction_isolation'))).toBe('repeatable read');
    expect(await withTransaction(db.pool, { isolation: 'serializable' }, (c) => show(c, 'transaction_isolation'))).toBe('serializable');
  });

  it('read only refuses a write, and the transaction is rolled back', async () => {
    expect(await withTransaction(db.pool, { readOnly: true }, (c) => show(c, 'transaction_read_only'))).toBe('on');
    expect(await withTransaction(db.pool, (c) => show(c, 'transaction_read_only'))).toBe('off');
    await expect(
      withTransaction(db.pool, { isolation: 'repeatable read', readOnly: true }, async (c) => {
        await c.query('INSERT INTO public.tx_probe VALUES (1)');
      }),
    ).rejects.toMatchObject({ code: '25006' });
    expect(await probeRows()).toEqual([]);
  });

  it('a read-only transaction takes no transaction id', async () => {
    const xid = await withTransaction(db.pool, { isolation: 'repeatable read', readOnly: true }, async (c) => {
      await c.query('SELECT count(*) FROM public.tx_probe');
      const { rows } = await c.query<{ xid: string | null }>('SELECT pg_current_xact_id_if_assigned()::text AS xid');
      return rows[0]!.xid;
    });
    expect(xid).toBeNull();
  });

  it('rejects a timeout that is not a whole number of milliseconds, before taking a connection', async () => {
    const idle = db.pool.idleCount;
    await expect(withTransaction(db.pool, { statementTimeoutMs: -1 }, async () => 1)).rejects.toThrow(RangeError);
    await expect(withTransaction(db.pool, { lockTimeoutMs: 1.5 }, async () => 1)).rejects.toThrow(RangeError);
    expect(db.pool.idleCount).toBe(idle);
  });
});

describe('an advisory lock taken first', () => {
  it('is held by the transaction, and only until it ends', async () => {
    const seen = await withTransaction(db.pool, { lock: KEY }, async () => freeElsewhere());
    expect(seen).toBe(false);
    expect(await freeElsewhere()).toBe(true);
  });

  it('is released when the transaction fails too', async () => {
    await expect(
      withTransaction(db.pool, { lock: KEY }, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await freeElsewhere()).toBe(true);
  });

  it('waits while another session holds it', async () => {
    await other.query('SELECT pg_advisory_lock($1)', [KEY]);
    let ran = false;
    const waiting = withTransaction(db.pool, { lock: KEY }, async () => {
      ran = true;
      return 'ran';
    });
    // The transaction's session shows up waiting for the lock.
    await expect
      .poll(async () => {
        const { rows } = await other.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        return rows[0]!.n;
      })
      .toBe(1);
    expect(ran).toBe(false);
    await other.query('SELECT pg_advisory_unlock($1)', [KEY]);
    expect(await waiting).toBe('ran');
  });

  it('with tryLock, the body runs when the lock is free and is skipped when another session holds it', async () => {
    expect(await withTransaction(db.pool, { tryLock: KEY }, async () => freeElsewhere())).toBe(false);
    await other.query('SELECT pg_advisory_lock($1)', [KEY]);
    try {
      let ran = false;
      const result = await withTransaction(db.pool, { tryLock: KEY }, async (c) => {
        ran = true;
        await c.query('INSERT INTO public.tx_probe VALUES (2)');
        return 'ran';
      });
      expect(result).toBeUndefined();
      expect(ran).toBe(false);
    } finally {
      await other.query('SELECT pg_advisory_unlock($1)', [KEY]);
    }
    expect(await probeRows()).toEqual([]);
  });
});

describe('timeouts of the transaction alone', () => {
  it('a statement longer than statementTimeoutMs is cancelled, and the setting ends with the transaction', async () => {
    const started = Date.now();
    const failure = await withTransaction(db.pool, { statementTimeoutMs: 100 }, async (c) => {
      await c.query('SELECT pg_sleep(20)');
    }).catch((err: unknown) => err);
    expect(failure).toMatchObject({ code: '57014' });
    expect(Date.now() - started).toBeLessThan(15_000);
    const client = await db.pool.connect();
    try {
      expect(await show(client, 'statement_timeout')).toBe('0');
    } finally {
      client.release();
    }
  });

  it('waiting longer than lockTimeoutMs for the advisory lock fails', async () => {
    await other.query('SELECT pg_advisory_lock($1)', [KEY]);
    try {
      let ran = false;
      const failure = await withTransaction(db.pool, { lock: KEY, lockTimeoutMs: 100 }, async () => {
        ran = true;
      }).catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: '55P03' });
      expect(ran).toBe(false);
    } finally {
      await other.query('SELECT pg_advisory_unlock($1)', [KEY]);
    }
  });
});

describe('how a transaction ends', () => {
  it('commits what the body wrote', async () => {
    await withTransaction(db.pool, async (c) => {
      await c.query('INSERT INTO public.tx_probe VALUES (3)');
    });
    expect(await probeRows()).toEqual([3]);
    await db.pool.query('DELETE FROM public.tx_probe');
  });

  it('rolls back on an error, which the caller gets', async () => {
    await expect(
      withTransaction(db.pool, async (c) => {
        await c.query('INSERT INTO public.tx_probe VALUES (4)');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await probeRows()).toEqual([]);
  });

  it('rolls back when the body asks to, and still returns its result', async () => {
    const result = await withTransaction(db.pool, async (c, tx) => {
      await c.query('INSERT INTO public.tx_probe VALUES (5)');
      tx.rollbackOnReturn();
      return 'kept nothing';
    });
    expect(result).toBe('kept nothing');
    expect(await probeRows()).toEqual([]);
  });
});

describe('on a connection the caller holds', () => {
  it('runs one transaction after another on it, and leaves it to the caller', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      // A session-level lock taken before the first transaction stays through both.
      await client.query('SELECT pg_advisory_lock($1)', [KEY]);
      const pids: number[] = [];
      for (const n of [6, 7]) {
        await withTransaction(client, { isolation: 'serializable' }, async (c) => {
          expect(c).toBe(client);
          expect(await show(c, 'transaction_isolation')).toBe('serializable');
          pids.push((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
          await c.query('INSERT INTO public.tx_probe VALUES ($1)', [n]);
        });
        expect(await freeElsewhere()).toBe(false);
      }
      await expect(
        withTransaction(client, async (c) => {
          await c.query('INSERT INTO public.tx_probe VALUES (8)');
          throw new Error('not this one');
        }),
      ).rejects.toThrow('not this one');
      expect(new Set(pids).size).toBe(1);
      expect(await probeRows()).toEqual([6, 7]);
      // Still open and out of any transaction.
      expect(await show(client, 'transaction_isolation')).toBe('read committed');
    } finally {
      await client.end();
      await db.pool.query('DELETE FROM public.tx_probe');
    }
  });
});

describe('on a pool with deadlines', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(db.url, { max: 2, deadlines: { connectMs: 1_000, queryMs: 5_000, transactionMs: 300 } });
  });
  afterAll(async () => {
    await pool.end();
  });

  it('a transaction past its deadline fails as the database being unavailable, whatever its options', async () => {
    const failure = await withTransaction(pool, { isolation: 'repeatable read', lock: KEY }, async (c) => {
      await c.query('SELECT pg_sleep(3)');
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(TransactionDeadlineError);
    expect(isDatabaseUnavailable(failure)).toBe(true);
    // The server saw the connection go: the lock is free again.
    await expect.poll(() => freeElsewhere(), { timeout: 5_000 }).toBe(true);
    expect(await withTransaction(pool, { readOnly: true }, (c) => show(c, 'transaction_read_only'))).toBe('on');
  });
});
