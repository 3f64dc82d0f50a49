import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '../src/db/pool.ts';
import { SNAPSHOT_FORMAT, type Snapshot } from '../src/read/snapshot.ts';
import type { SnapshotInfo } from '../src/read/snapshot-store.ts';

/** Parts stay far below PostgreSQL's 1 GB limit on one value, and bound the memory of one row. */
const PART_BYTES = 32 * 1024 * 1024;

/**
 * Writes a snapshot: parts first, each in a short transaction of its own (a long transaction
 * would hold the projector's outbox horizon back), then one short transaction that marks it
 * complete and drops the snapshots it replaces.
 */
export async function writeSnapshot(pool: Pool, snapshot: Snapshot, bytes: Buffer = snapshot.encode(), partBytes = PART_BYTES): Promise<SnapshotInfo> {
  const info: SnapshotInfo = { id: randomUUID(), version: snapshot.version, size: bytes.length, listings: snapshot.count, search: snapshot.search !== undefined };
  // Snapshots a crashed writer left incomplete.
  await pool.query(`DELETE FROM projection.snapshots WHERE NOT complete AND created_at < now() - interval '1 hour'`);
  await pool.query('INSERT INTO projection.snapshots (id, version, format, size, listings, search) VALUES ($1, $2, $3, $4, $5, $6)', [
    info.id,
    info.version,
    SNAPSHOT_FORMAT,
    info.size,
    info.listings,
    info.search,
  ]);
  try {
    for (let part = 0, at = 0; at < bytes.length || part === 0; part++, at += partBytes) {
      await pool.query('INSERT INTO projection.snapshot_parts (snapshot, part, bytes) VALUES ($1, $2, $3)', [info.id, part, bytes.subarray(at, at + partBytes)]);
    }
    await withTransaction(pool, async (client) => {
      await client.query('UPDATE projection.snapshots SET complete = true WHERE id = $1', [info.id]);
      await client.query('DELETE FROM projection.snapshots WHERE complete AND search = $1 AND id <> $2', [info.search, info.id]);
    });
  } catch (err) {
    await pool.query('DELETE FROM projection.snapshots WHERE id = $1', [info.id]).catch(() => undefined);
    throw err;
  }
  return info;
}
