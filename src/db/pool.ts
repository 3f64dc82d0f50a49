import pg from 'pg';

// int8 (bigint) columns come back as JS numbers: our counters stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** A pool or one of its clients (inside a transaction): what a query needs. */
export type Queryable = Pool | PoolClient;

export function createPool(connectionString: string, opts: { max?: number; applicationName?: string } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'catalog',
    idleTimeoutMillis: 30_000,
    // A server that does not answer must not hold a caller (or a shutdown) for ever: a write
    // met by an unreachable database answers SERVICE_UNAVAILABLE within seconds, never hangs.
    connectionTimeoutMillis: 3_000,
  });
  // A client losing its connection must not crash the process, idle in the pool (the pool's
  // 'error') or checked out between two queries (the client's own, which the pool leaves
  // unheard meanwhile): its next query fails, and the pool replaces it on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs fn in a transaction on one client; commits on success, rolls back on any error. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
