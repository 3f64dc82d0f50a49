import type { Pool, PoolClient } from '../db/pool.ts';
import { NO_STATE, snapshotUsable, type StateRow } from './mirror-versions.ts';
import { Snapshot, type SnapshotRow } from './snapshot.ts';
import { latestSnapshot, readSnapshotBytes, SNAPSHOT_COLUMNS, type LocalSnapshotCache, type SnapshotInfo } from './snapshot-store.ts';

/**
 * What a mirror reads of the projection, each inside the mirror's one read-only REPEATABLE READ
 * transaction per sync (`client`), so that the version, the rows and the categories agree.
 */

/** Categories are listed by name as a reader expects: case and accents do not reorder them. */
const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

export async function readState(client: PoolClient): Promise<StateRow> {
  const { rows } = await client.query<StateRow>('SELECT version, oldest_version, change_position, change_log, committed_at, oldest_change_at, traceparent FROM projection.state');
  return rows[0] ?? NO_STATE;
}

/** The category list envelope as served: `{"categories":[...]}`, by name. */
export async function readCategories(client: PoolClient): Promise<string> {
  const { rows } = await client.query<{ slug: string; name: string; doc: string }>('SELECT slug, name, doc FROM projection.category_counts');
  rows.sort((a, b) => byName.compare(a.name, b.name) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  return `{"categories":[${rows.map((r) => r.doc).join(',')}]}`;
}

/** What changed after version `from`: the products removed, the products written (their rows now), and the category list. */
export async function readChanges(client: PoolClient, from: number): Promise<{ removedIds: string[]; rows: SnapshotRow[]; categoriesBody: string }> {
  const removed = await client.query<{ id: string }>('SELECT id FROM projection.removed WHERE version > $1', [from]);
  const changed = await client.query<SnapshotRow>(`SELECT ${SNAPSHOT_COLUMNS} FROM projection.products WHERE version > $1`, [from]);
  const categoriesBody = await readCategories(client);
  return { removedIds: removed.rows.map((r) => r.id), rows: changed.rows, categoriesBody };
}

export interface StoredSnapshot {
  snapshot: Snapshot;
  info: SnapshotInfo;
  bytes: Buffer;
  /** Whether the bytes came from this host's copy rather than the database. */
  local: boolean;
}

/**
 * The projector's latest snapshot (with the search index or without), from this host's copy when
 * it has it, else from the database (its parts on up to four connections of `pool` at once);
 * undefined when there is none usable at `state` (snapshotUsable).
 */
export async function loadStoredSnapshot(
  client: PoolClient,
  pool: Pool,
  cache: LocalSnapshotCache | undefined,
  withSearch: boolean,
  state: StateRow,
): Promise<StoredSnapshot | undefined> {
  const info = await latestSnapshot(client, withSearch);
  if (!info || !snapshotUsable(info.version, state)) return undefined;
  let bytes = await cache?.read(info);
  const local = bytes !== undefined;
  bytes ??= await readSnapshotBytes(client, info, pool);
  return { snapshot: Snapshot.decode(bytes), info, bytes, local };
}
