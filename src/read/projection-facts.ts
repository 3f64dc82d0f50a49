import type { Pool } from '../db/pool.ts';
import { LEADER_APPLICATION_NAME } from '../db/leadership.ts';
import { SNAPSHOT_FORMAT } from './snapshot.ts';

/**
 * What /metrics tells of the cluster behind this process, read in one query at scrape time
 * (docs/operating.md, "Monitoring"): the projectors connected, the newest stored snapshot and
 * the change log's retained window.
 */
export interface ProjectionFacts {
  /**
   * Projector processes connected to the database, the leader and its standbys: each one keeps
   * its leadership session open (src/db/leadership.ts), whether it won the lock or waits.
   */
  projectorSessions: number;
  /** The projection's version now. */
  projectionVersion: number;
  /** The newest complete snapshot: its version and age; undefined when there is none. */
  snapshot: { version: number; ageSeconds: number } | undefined;
  /** The change log's last position, and the position through which it may have been pruned. */
  changeHead: number;
  changesPrunedThrough: number;
}

export async function projectionFacts(pool: Pool): Promise<ProjectionFacts> {
  const { rows } = await pool.query<{
    projectors: number;
    version: string;
    change_position: string;
    changes_pruned_through: string;
    snapshot_version: string | null;
    snapshot_age: number | null;
  }>(
    `SELECT (SELECT count(*)::int FROM pg_stat_activity
              WHERE application_name = $1 AND datname = current_database()) AS projectors,
            s.version, s.change_position, s.changes_pruned_through,
            snap.version AS snapshot_version,
            EXTRACT(epoch FROM now() - snap.created_at)::float8 AS snapshot_age
       FROM projection.state s
       LEFT JOIN LATERAL (SELECT version, created_at FROM projection.snapshots
                           WHERE complete AND format = $2 ORDER BY version DESC LIMIT 1) snap ON true`,
    [LEADER_APPLICATION_NAME, SNAPSHOT_FORMAT],
  );
  const row = rows[0];
  if (!row) throw new Error('projection.state has no row');
  return {
    projectorSessions: row.projectors,
    projectionVersion: Number(row.version),
    snapshot: row.snapshot_version === null ? undefined : { version: Number(row.snapshot_version), ageSeconds: Math.max(0, row.snapshot_age ?? 0) },
    changeHead: Number(row.change_position),
    changesPrunedThrough: Number(row.changes_pruned_through),
  };
}
