import type { Pool } from '../src/db/pool.ts';
import type { Queryable } from './listing-source.ts';
import { bulkTransaction, INTERACTIVE_HORIZON } from './outbox-reader.ts';

export interface ProjectionLag {
  /** Outbox rows not yet reflected in what reads show (projection and search index). */
  unprojectedRows: number;
  /** Age of the oldest such row, 0 when there is none. */
  oldestUnprojectedAgeSeconds: number;
}

/**
 * How far reads are behind the write model, for /readyz and metrics. Measured from the 'search'
 * checkpoint, which never passes 'projection' (and equals it without an external index), so an
 * index that lags counts too.
 */
export async function projectionLag(pool: Pool): Promise<ProjectionLag> {
  const { rows } = await pool.query<{ n: number; age: number | null }>(
    // Counted per checkpoint (a lateral subquery): the outbox keeps a day of rows, and a row
    // comparison with a joined checkpoint would read every one of them.
    `SELECT later.n, later.age
       FROM projection.checkpoints c
       CROSS JOIN LATERAL (SELECT count(*)::int AS n, EXTRACT(epoch FROM now() - min(o.created_at))::float8 AS age
                             FROM catalog.outbox o WHERE (o.txid, o.seq) > (c.txid, c.seq)) later
      WHERE c.name = 'search'`,
  );
  const row = rows[0];
  return { unprojectedRows: row?.n ?? 0, oldestUnprojectedAgeSeconds: Math.max(0, row?.age ?? 0) };
}

export interface BlockingTransaction {
  pid: number;
  ageSeconds: number;
  state: string | null;
  applicationName: string | null;
  database: string | null;
}

/**
 * The oldest transaction of this database still running, when it keeps committed outbox rows
 * from being read (they sort after it) and has run for longer than `minAgeSeconds`. A bulk
 * transaction (an import) is not one: it holds back only the main lane, never an edit.
 */
export async function blockingTransaction(db: Queryable, minAgeSeconds: number): Promise<BlockingTransaction | undefined> {
  const { rows } = await db.query<BlockingTransaction>(
    `SELECT a.pid, EXTRACT(epoch FROM now() - a.xact_start)::float8 AS "ageSeconds", a.state,
            a.application_name AS "applicationName", a.datname AS database
       FROM pg_stat_activity a
      WHERE a.backend_xid IS NOT NULL
        AND a.datname = current_database()
        AND a.backend_type <> 'autovacuum worker'
        AND a.xact_start < now() - make_interval(secs => $1)
        AND NOT ${bulkTransaction('a')}
        -- The first such row in the index's order: an EXISTS would be planned as a scan of
        -- every row the outbox keeps (a day's, a million after a large import).
        AND (SELECT o.txid FROM catalog.outbox o WHERE o.txid >= ${INTERACTIVE_HORIZON} ORDER BY o.txid LIMIT 1) IS NOT NULL
      ORDER BY age(a.backend_xid) DESC
      LIMIT 1`,
    [minAgeSeconds],
  );
  return rows[0];
}
