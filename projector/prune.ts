import type { Queryable } from './listing-source.ts';

/**
 * Forgets removals older than `olderThanHours`; readers whose version is at or below the newest
 * pruned one reload everything instead of applying a delta (projection.state.oldest_version).
 * Runs inside a transaction holding PROJECTION_WRITE_LOCK. Returns the number of rows pruned.
 */
export async function pruneRemoved(db: Queryable, olderThanHours: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH pruned AS (
       DELETE FROM projection.removed WHERE removed_at < now() - make_interval(hours => $1) RETURNING version
     ), raised AS (
       UPDATE projection.state s SET oldest_version = GREATEST(s.oldest_version, (SELECT max(version) FROM pruned))
        WHERE EXISTS (SELECT 1 FROM pruned)
     )
     SELECT count(*)::int AS n FROM pruned`,
    [olderThanHours],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Deletes outbox rows that both checkpoints have passed and that are older than
 * `olderThanHours` (kept that long for inspecting what changed), at most `limit` per call so
 * the delete stays a short transaction. Returns the number of rows deleted.
 */
export async function pruneOutbox(db: Queryable, olderThanHours: number, limit = 10_000): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH passed AS (
       SELECT o.seq FROM catalog.outbox o
        WHERE o.created_at < now() - make_interval(hours => $1)
          AND NOT EXISTS (SELECT 1 FROM projection.checkpoints c WHERE (o.txid, o.seq) > (c.txid, c.seq))
        ORDER BY o.txid, o.seq
        LIMIT $2
     ), pruned AS (
       DELETE FROM catalog.outbox o USING passed WHERE o.seq = passed.seq RETURNING 1
     )
     SELECT count(*)::int AS n FROM pruned`,
    [olderThanHours, limit],
  );
  return rows[0]?.n ?? 0;
}
