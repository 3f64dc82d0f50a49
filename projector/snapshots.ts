import type { Pool } from '../src/db/pool.ts';
import { latestSnapshot, type SnapshotInfo } from '../src/read/snapshot-store.ts';
import { embeddedOptions, loadSearchSettings } from '../src/search/search-settings.ts';
import type { Log } from '../src/util/log.ts';
import { runChildTask, type ChildTaskModule } from '../src/util/child-task.ts';
import type { SnapshotBuildJob, SnapshotBuildResult } from './snapshot-build-task.ts';

/**
 * The projection snapshots the leading projector writes for API processes (see
 * src/read/snapshot.ts): one as soon as none is usable, then a new one when enough changed
 * since the last that loading it beats applying the changes (a fiftieth of the catalog, at
 * least a thousand products), or when it is an hour old and anything changed (so it never
 * falls behind the retention of removals). A build costs time in proportion to the catalog, so
 * after one the next waits nine times as long as it took (a bulk import does not rebuild on
 * every fiftieth). Each build runs in a child process of its own (snapshot-build-task.ts): the
 * rows it reads and the index it builds never enter the serving process's memory, which would
 * otherwise grow by several times the snapshot's size and keep much of it, and the build's
 * seconds of work do not hold up its answers.
 */
export interface SnapshotWriter {
  /** Writes a snapshot now if none is usable; resolves when one is. */
  ensure(): Promise<void>;
  /** Starts writing one in the background when one is due (at most one at a time). */
  maybeWrite(): void;
  /** Resolves when the write under way (if any) has ended. */
  settle(): Promise<void>;
}

/** A new snapshot is due after this many changed products, and at least a CHANGES_SHARE-th of the catalog. */
export const MIN_CHANGES = 1000;
export const CHANGES_SHARE = 50;
const MAX_AGE_MS = 60 * 60_000;
/** Between two checks of whether a snapshot is due. */
const CHECK_EVERY_MS = 5_000;
/** After a build of d ms, the next (unless none is usable) waits REST_FACTOR × d. */
const REST_FACTOR = 9;

const BUILD_TASK: ChildTaskModule = { source: 'projector/snapshot-build-task.ts', compiled: 'src/snapshot-build-task.js' };

export function createSnapshotWriter(opts: {
  pool: () => Pool;
  /** The database the build's process connects to (the pool's own). */
  connectionString: string;
  /** Whether API processes search the embedded engine (the snapshot then holds its index). */
  search: boolean;
  cacheDir?: string | undefined;
  log: Log;
}): SnapshotWriter {
  const searchFields = opts.search ? embeddedOptions(loadSearchSettings()).searchableFields : undefined;
  let running: Promise<void> | undefined;
  let lastCheck = 0;
  let restUntil = 0;

  async function usable(): Promise<{ info: SnapshotInfo | undefined; due: boolean }> {
    const pool = opts.pool();
    const { rows } = await pool.query<{ version: number; oldest_version: number }>('SELECT version, oldest_version FROM projection.state');
    const state = rows[0] ?? { version: 0, oldest_version: 0 };
    const info = await latestSnapshot(pool, opts.search);
    if (!info || info.version < state.oldest_version) return { info: undefined, due: true };
    if (info.version === state.version) return { info, due: false };
    const { rows: counts } = await pool.query<{ changes: number; age_ms: number }>(
      `SELECT (SELECT count(*) FROM projection.products WHERE version > $1) + (SELECT count(*) FROM projection.removed WHERE version > $1) AS changes,
              (SELECT extract(epoch FROM now() - created_at) * 1000 FROM projection.snapshots WHERE id = $2) AS age_ms`,
      [info.version, info.id],
    );
    const changes = Number(counts[0]?.changes ?? 0);
    const age = Number(counts[0]?.age_ms ?? 0);
    return { info, due: (changes >= MIN_CHANGES && changes * CHANGES_SHARE >= info.listings) || (changes > 0 && age >= MAX_AGE_MS) };
  }

  async function write(): Promise<void> {
    const started = Date.now();
    const job: SnapshotBuildJob = { connectionString: opts.connectionString, searchFields, cacheDir: opts.cacheDir };
    const { info, cacheError } = await runChildTask<SnapshotBuildResult>(BUILD_TASK, job);
    if (cacheError !== undefined) opts.log.warn({ err: new Error(cacheError) }, 'could not keep a local copy of the projection snapshot');
    const ms = Date.now() - started;
    restUntil = Date.now() + REST_FACTOR * ms;
    opts.log.info({ version: info.version, listings: info.listings, megabytes: Math.round(info.size / 2 ** 20), ms }, 'wrote a projection snapshot');
  }

  function start(): Promise<void> {
    running ??= write().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    async ensure() {
      if (running) await running.catch(() => undefined);
      const { info } = await usable();
      if (!info) await start();
    },
    maybeWrite() {
      if (running || Date.now() - lastCheck < CHECK_EVERY_MS) return;
      lastCheck = Date.now();
      usable()
        .then(({ info, due }) => (due && (!info || Date.now() >= restUntil) ? start() : undefined))
        .catch((err: unknown) => opts.log.warn({ err }, 'writing a projection snapshot failed; trying again later'));
    },
    async settle() {
      await running?.catch(() => undefined);
    },
  };
}
