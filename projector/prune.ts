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
