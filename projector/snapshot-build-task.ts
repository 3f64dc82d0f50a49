import { createPool } from '../src/db/pool.ts';
import { buildCurrentSnapshot, LocalSnapshotCache, type SnapshotInfo } from '../src/read/snapshot-store.ts';
import type { SearchDocument } from '../src/search/port.ts';
import { serveChildTask } from '../src/util/child-task.ts';
import { writeSnapshot } from './snapshot-writer.ts';

/**
 * A child process's module (run by projector/snapshots.ts through src/util/child-task.ts):
 * builds a projection snapshot as the database is now, writes it into PostgreSQL and this host's
 * local copy, and answers with what it wrote. The rows it reads, the index it builds and the
 * encoded bytes live in this process, and go back to the system when it ends: the serving
 * process's heap and resident size stay as they were, and its event loop keeps answering.
 */
export interface SnapshotBuildJob {
  connectionString: string;
  /** The embedded engine's searchable fields when the snapshot holds its index. */
  searchFields?: readonly (keyof SearchDocument)[] | undefined;
  cacheDir?: string | undefined;
}

export interface SnapshotBuildResult {
  info: SnapshotInfo;
  /** Why the local copy could not be kept (the snapshot is written all the same). */
  cacheError?: string;
}

serveChildTask<SnapshotBuildJob, SnapshotBuildResult>(async (job) => {
  // One connection builds (one transaction), then writes part after part.
  const pool = createPool(job.connectionString, { max: 1, applicationName: 'catalog-snapshot' });
  try {
    const snapshot = await buildCurrentSnapshot(pool, job.searchFields);
    const bytes = snapshot.encode();
    const info = await writeSnapshot(pool, snapshot, bytes);
    let cacheError: string | undefined;
    if (job.cacheDir) {
      await new LocalSnapshotCache(job.cacheDir).write(info, bytes).catch((err: unknown) => {
        cacheError = err instanceof Error ? err.message : String(err);
      });
    }
    return cacheError === undefined ? { info } : { info, cacheError };
  } finally {
    await pool.end();
  }
});
